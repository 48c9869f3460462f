/**
 * The fleet page's files (web/fleet: HTML, CSS and plain JavaScript, no framework, nothing from
 * another server), read from the installation once and kept in memory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from '../observability/admin-server';

/** Admin paths of the fleet page and its parts. */
export const FLEET_PATHS = {
  page: '/fleet',
  script: '/fleet/page.js',
  style: '/fleet/page.css',
  icon: '/fleet/icon.svg',
  view: '/fleet/view',
  events: '/fleet/events',
} as const;

const FILES: Record<string, { file: string; contentType: string }> = {
  [FLEET_PATHS.page]: { file: 'index.html', contentType: 'text/html; charset=utf-8' },
  [FLEET_PATHS.script]: { file: 'page.js', contentType: 'text/javascript; charset=utf-8' },
  [FLEET_PATHS.style]: { file: 'page.css', contentType: 'text/css; charset=utf-8' },
  [FLEET_PATHS.icon]: { file: 'icon.svg', contentType: 'image/svg+xml' },
};

/** Returns the web/fleet folder, searched upwards from this module's folder (source or dist). */
export function fleetAssetDir(): string | undefined {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'web', 'fleet');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
  }
  return undefined;
}

/**
 * The admin server's pages for the fleet page, read lazily (a missing installation answers with a
 * short page saying so instead of failing Convoy's start).
 */
export function fleetPages(dir: string | undefined): Record<string, () => Page> {
  const cache = new Map<string, Page>();
  const pages: Record<string, () => Page> = {};
  for (const [urlPath, { file, contentType }] of Object.entries(FILES)) {
    pages[urlPath] = () => {
      let page = cache.get(urlPath);
      if (!page) {
        const body = dir ? readOrUndefined(path.join(dir, file)) : undefined;
        page = body !== undefined ? { contentType, body } : missing(contentType);
        if (body !== undefined) cache.set(urlPath, page);
      }
      return page;
    };
  }
  return pages;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function missing(contentType: string): Page {
  const text = 'The fleet page files (web/fleet) are not installed with this Convoy.';
  if (contentType.startsWith('text/html')) return { contentType, body: `<!doctype html><p>${text}</p>\n` };
  if (contentType.startsWith('image/svg'))
    return { contentType, body: '<svg xmlns="http://www.w3.org/2000/svg"/>\n' };
  return { contentType, body: `/* ${text} */\n` };
}
