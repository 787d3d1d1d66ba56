/**
 * RBAC on a real API server reaches the authorizer through its informers, a moment after the
 * bindings are applied: tests wait here until a binding is in force before relying on it.
 */
import type { ControlPlane } from './control-plane';
import { eventually } from './eventually';

/** Resolves once the API server allows `user` to `verb` the non-resource URL `path` (asked as the admin). */
export async function untilAllowed(plane: ControlPlane, user: string, path: string, verb = 'get'): Promise<void> {
  await eventually(
    async () => {
      const res = await plane.request(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, nonResourceAttributes: { path, verb } } },
        plane.adminToken,
      );
      return res.body?.status?.allowed === true;
    },
    { timeoutMs: 20_000, what: `the RBAC bindings in force (${user} may ${verb} ${path})` },
  );
}
