/**
 * The episodes a schedule is drawn from, by name: the registry the generator (plan-schedule.ts)
 * looks an episode up in. Each family or aimed episode lives in its own module of this folder; a
 * new episode is its module plus one line here (and its name in EpisodeName, presets.ts).
 */
import type { EpisodeName } from '../presets.js';
import { catchUpEpisodes } from './catch-up-episodes.js';
import { clockEpisodes } from './clock-episode.js';
import type { Episode } from './episode-kit.js';
import { lagCrash } from './lag-crash.js';
import { networkEpisodes } from './network-episodes.js';
import { processEpisodes } from './process-episodes.js';
import { resyncCrash } from './resync-crash.js';
import { zombieCrash } from './zombie-crash.js';

/**
 * Every episode, by name. Each returns its steps (refs are step indexes within the episode), or
 * null when the selected kinds or the cluster size cannot make it. Step 0 starts at the episode's start.
 */
export const EPISODES: Readonly<Record<EpisodeName, Episode>> = {
  ...processEpisodes,
  ...networkEpisodes,
  ...catchUpEpisodes,
  ...clockEpisodes,
  'lag-crash': lagCrash,
  'resync-crash': resyncCrash,
  'zombie-crash': zombieCrash,
};
