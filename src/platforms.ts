import { z } from 'zod';

/** The social platforms placements are reported from, in the order answers list them. */
export const PLATFORMS = ['instagram', 'tiktok', 'youtube', 'facebook'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const platformSchema = z.enum(PLATFORMS);
