/** The HTTP platforms (CONTRACT §10); the HTTP-layer specs run on each (`describe.each(PLATFORMS)`). */
export const PLATFORMS = ['express', 'fastify'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** The platform of apps and processes a spec does not choose: TEST_HTTP_PLATFORM, else the service's default (express). */
export const DEFAULT_PLATFORM: Platform = (process.env.TEST_HTTP_PLATFORM as Platform | undefined) ?? 'express';
