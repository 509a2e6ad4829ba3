import { SetMetadata } from '@nestjs/common';

export const PERMISSIONS_KEY = 'permissions';
export const PUBLIC_KEY = 'public';

/** The permissions a route needs (all of them). Routes without it are refused: deny by default. */
export const Permissions = (...permissions: string[]) => SetMetadata(PERMISSIONS_KEY, permissions);
/** Opens a route to unauthenticated callers (health only). */
export const Public = () => SetMetadata(PUBLIC_KEY, true);
