import type { FleetModel, RouteModel } from '../../src/model/fleet';
import { MAX_RETRY_ATTEMPTS } from '../../src/gateway/routes/retry';

/**
 * A hand-built FleetModel for the per-route features of docs/gateway-api.md §19 onwards (retries
 * and their timeout budget), including the largest values the CRDs let through, so the golden
 * file and `envoy --mode validate` cover them.
 */

/** The longest Gateway API duration: four groups of 99999 hours. */
export const LONGEST_DURATION_MS = 4 * 99_999 * 3_600_000;

const WEB = 'default/web/80';

function forward(rule: number, prefix: string, extra: Partial<RouteModel>): RouteModel {
  return {
    name: `HTTPRoute/default/features/rule/${rule}/match/0`,
    match: { path: { type: 'PathPrefix', value: prefix } },
    action: { kind: 'forward', backends: [{ cluster: WEB, weight: 1 }] },
    ...extra,
  };
}

/** Routes with retry policies: plain, with every timeout combination, and at the CRD's extremes. */
export function retryRoutes(): RouteModel[] {
  return [
    forward(0, '/retry-codes', { retry: { attempts: 3, codes: [500, 502] } }),
    forward(1, '/retry-connection', { retry: { codes: [] } }),
    forward(2, '/retry-backoff', { retry: { attempts: 2, backoffMs: 100, codes: [503] }, timeoutMs: 5_000 }),
    forward(3, '/retry-per-try', { retry: { attempts: 2, codes: [504] }, perTryTimeoutMs: 250 }),
    forward(4, '/retry-both', { retry: { codes: [500] }, timeoutMs: 3_000, perTryTimeoutMs: 1_000 }),
    forward(5, '/retry-largest', {
      retry: { attempts: MAX_RETRY_ATTEMPTS, backoffMs: LONGEST_DURATION_MS, codes: [400, 599] },
      perTryTimeoutMs: LONGEST_DURATION_MS,
    }),
    forward(6, '/retry-largest-request', {
      retry: { attempts: MAX_RETRY_ATTEMPTS, backoffMs: LONGEST_DURATION_MS, codes: [500] },
      timeoutMs: LONGEST_DURATION_MS,
      perTryTimeoutMs: LONGEST_DURATION_MS,
    }),
    forward(7, '/timeouts-largest', { timeoutMs: LONGEST_DURATION_MS, perTryTimeoutMs: LONGEST_DURATION_MS }),
    forward(8, '/timeouts-per-try-largest', { perTryTimeoutMs: LONGEST_DURATION_MS }),
  ];
}

/** Routes with CORS policies as src/gateway/routes/cors.ts compiles them. */
export function corsRoutes(): RouteModel[] {
  return [
    forward(20, '/cors-1', {
      cors: {
        origins: [
          { name: 'origin', type: 'Exact', value: 'https://www.foo.com' },
          { name: 'origin', type: 'Exact', value: 'https://www.foo.com:443' },
          { name: 'origin', type: 'RegularExpression', value: 'https://[-.a-z0-9]+\\.bar\\.com(:443)?' },
        ],
        allowMethods: ['GET', 'OPTIONS'],
        allowHeaders: ['x-header-1', 'x-header-2'],
        exposeHeaders: ['x-header-3', 'x-header-4'],
        allowCredentials: true,
        maxAgeSeconds: 3600,
      },
    }),
    forward(21, '/cors-any', {
      cors: {
        origins: [{ name: 'origin', type: 'RegularExpression', value: '.*' }],
        allowMethods: ['*'],
        allowHeaders: ['*'],
        exposeHeaders: [],
        allowCredentials: false,
        maxAgeSeconds: 5,
      },
    }),
    forward(22, '/cors-none', {
      cors: { origins: [], allowMethods: [], allowHeaders: [], exposeHeaders: [], allowCredentials: false },
    }),
  ];
}

/** Two matches of one named rule (GEP-995): both count in the same per-route stats. */
export function namedRuleRoutes(): RouteModel[] {
  return [0, 1].map((match) => ({
    ...forward(30, `/named-${match}`, { statPrefix: 'HTTPRoute/default/features/checkout' }),
    name: `HTTPRoute/default/features/rule/30/match/${match}`,
  }));
}

/** backendRef filters: one filtered backend alone, and one cluster twice with different headers. */
export function backendFilterRoutes(): RouteModel[] {
  const set = (value: string) => ({ set: [{ name: 'Backend', value }] });
  return [
    forward(40, '/backend-filter-one', {
      action: {
        kind: 'forward',
        backends: [
          { cluster: WEB, weight: 1, requestHeaders: set('one'), responseHeaders: { remove: ['server'] } },
        ],
      },
    }),
    forward(41, '/backend-filter-split', {
      action: {
        kind: 'forward',
        backends: [
          { cluster: WEB, weight: 1, requestHeaders: set('a') },
          {
            cluster: WEB,
            weight: 1,
            requestHeaders: { add: [{ name: 'x-b', value: 'b' }], remove: ['x-c'] },
          },
        ],
        invalidWeight: 1,
      },
      requestHeaders: set('rule'),
    }),
  ];
}

/** Plain HTTP with one virtual host carrying every per-route feature. */
export function routeFeaturesFleet(): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway: { namespace: 'infra', name: 'gw' },
    ports: [
      {
        name: 'http-8080',
        port: 8080,
        http: {
          routeConfigName: 'http-8080',
          virtualHosts: [
            {
              name: 'features.example.com',
              domains: ['features.example.com'],
              routes: [...retryRoutes(), ...corsRoutes(), ...namedRuleRoutes(), ...backendFilterRoutes()],
            },
          ],
        },
        filterChains: [],
      },
    ],
    clusters: [{ name: WEB, protocol: 'http1', endpoints: [{ address: '10.0.0.1', port: 80, ready: true }] }],
    secrets: [],
  };
}
