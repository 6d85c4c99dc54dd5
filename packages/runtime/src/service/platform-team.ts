/**
 * The platform's own team (kind `platform`), created by identity's first migration. Its members are platform
 * staff; servers it owns are platform servers, which platform admins offer to other teams (spec §2.4).
 */
export const PLATFORM_TEAM_ID = '00000000-0000-4000-8000-000000000001';
