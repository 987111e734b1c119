// Renewal of a token a login issued (issue 28, item 5): as Vault asks the auth method
// (userpass and approle `pathLoginRenew`), the user or role must still exist and still
// grant the same policies; otherwise the token is not renewed (it keeps running to its
// current expiry, and can be revoked as any token).
import { badRequest } from '../../core/errors';
import type { AppRoleService } from '../approle/approle.service';
import { sanitizePolicies } from '../tokens/tokens.service';
import type { TokenEntry } from '../tokens/tokens.types';
import type { UserpassService } from '../userpass/userpass.service';
import type { AuthMountService } from './auth-mounts.service';
import type { TokenSettings } from './token-settings';

export type LoginRenewalCheck = (entry: TokenEntry) => Promise<void>;

export function createLoginRenewalCheck(deps: { auth: AuthMountService; userpass: UserpassService; approle: AppRoleService }): LoginRenewalCheck {
  const samePolicies = (settings: TokenSettings, entry: TokenEntry): boolean =>
    sanitizePolicies(settings.policies, !settings.noDefaultPolicy).join('\n') === entry.policies.join('\n');
  return async (entry) => {
    if (entry.authMount === undefined) return;
    await deps.auth.refresh();
    const mount = deps.auth.list().find((m) => m.uuid === entry.authMount);
    // Disabling the method revoked its tokens; one still here lost a race with it.
    if (!mount) throw badRequest('the auth method that issued this token no longer exists, not renewing');
    if (mount.type === 'userpass') {
      const user = await deps.userpass.get(mount, entry.meta?.username ?? '');
      if (!user) throw badRequest('user no longer exists, not renewing');
      if (!samePolicies(user.token, entry)) throw badRequest('policies have changed, not renewing');
      return;
    }
    const role = await deps.approle.getRole(mount, entry.meta?.role_name ?? '');
    if (!role) throw badRequest(`role ${JSON.stringify(entry.meta?.role_name ?? '')} does not exist during renewal`);
    if (!samePolicies(role.token, entry)) throw badRequest('policies have changed, not renewing');
  };
}
