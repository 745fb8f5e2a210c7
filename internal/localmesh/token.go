package localmesh

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tokenLifetime is how long tokens from ServiceAccountToken stay valid.
const tokenLifetime = 24 * 3600

// ServiceAccountToken makes sure the service account namespace/name exists
// in the named cluster (creating the namespace if needed), binds it to
// clusterRole (e.g. "cluster-admin") with a ClusterRoleBinding (and to the
// Role of that name in the records namespace, if there is one), and returns
// a bearer token for it from the TokenRequest API, valid for 24 hours and
// across StopCluster/StartCluster. Combine it with Server and CA to build
// host+token+CA configurations.
func (m *Mesh) ServiceAccountToken(ctx context.Context, cluster, namespace, name, clusterRole string) (string, error) {
	admin := m.RESTConfig(cluster)
	if admin == nil {
		return "", fmt.Errorf("localmesh: no cluster named %q (have %v)", cluster, m.names)
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return "", err
	}
	if err := ensureNamespace(ctx, cs, namespace); err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("localmesh: creating service account %s/%s: %w", namespace, name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("localmesh:%s:%s:%s", namespace, name, clusterRole)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("localmesh: binding %s/%s to %s: %w", namespace, name, clusterRole, err)
	}
	// A Role of the same name in the records namespace, if there is one
	// (the provider's ConfigMap access lives there, not in the ClusterRole).
	if _, err := cs.RbacV1().Roles(RecordsNamespace).Get(ctx, clusterRole, metav1.GetOptions{}); err == nil {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: RecordsNamespace, Name: fmt.Sprintf("localmesh:%s:%s:%s", namespace, name, clusterRole)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
		}
		if _, err := cs.RbacV1().RoleBindings(RecordsNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("localmesh: binding %s/%s to Role %s: %w", namespace, name, clusterRole, err)
		}
	}
	lifetime := int64(tokenLifetime)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &lifetime}}
	tr, err = cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("localmesh: requesting a token for %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}
