/**
 * The listener-layout benchmark's world (docs/xds.md §16): one HTTPS port with N exact hostnames
 * (the bench world's `svc-<i>.bench.example.com`, each with its own certificate and one direct
 * response route answering with its hostname), optionally the matching edge cases: a wildcard,
 * an exact name the wildcard covers, and a hostname-less listener. No backend: the routes answer
 * themselves, so the data plane measures the listener layout and nothing upstream.
 */
import type { FilterChainModel, FleetModel, SecretModel } from '../../src/model/fleet';
import { hostnameOf } from '../world';
import { issueLeaf, loadPki, type KeyPairPem, type Pki } from '../pki';

export const LAYOUT_FLEET = 'infra/layout';
export const HTTPS_PORT_NAME = 'https-8443';

/** The edge-case chains a world may carry besides its exact hostnames. */
export interface EdgeCases {
  /** `*.wild.example.com` and the exact `exact.wild.example.com` it covers. */
  wildcard: boolean;
  /** A listener without hostname: the fallback for unknown SNI and for no SNI. */
  catchAll: boolean;
}

export const WILDCARD = '*.wild.example.com';
export const SHADOWED = 'exact.wild.example.com';
/** The certificate of the hostname-less listener names this host. */
export const FALLBACK_HOST = 'fallback.example.com';

/** Holds the certificates of a layout world, made once per process. */
export class LayoutPki {
  readonly pki: Pki;
  private readonly extra = new Map<string, KeyPairPem>();

  constructor(count: number) {
    this.pki = loadPki(count, hostnameOf);
  }

  /** The leaf of exact host i. */
  leaf(i: number): KeyPairPem {
    return this.pki.leaves[i];
  }

  /** A leaf for one of the edge-case names, issued on first use. */
  named(host: string): KeyPairPem {
    let leaf = this.extra.get(host);
    if (!leaf) {
      leaf = issueLeaf(this.pki.ca, host);
      this.extra.set(host, leaf);
    }
    return leaf;
  }
}

function secret(name: string, leaf: KeyPairPem): SecretModel {
  return { name, certificateChain: leaf.cert, privateKey: leaf.key };
}

function httpsChain(name: string, host: string | undefined, secretName: string): FilterChainModel {
  const shown = host ?? '*';
  return {
    name,
    serverNames: host ? [host] : [],
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: [secretName],
    routeConfigName: `${HTTPS_PORT_NAME}/${shown}`,
    virtualHosts: [
      {
        name: shown,
        domains: [shown],
        routes: [
          {
            name: `HTTPRoute/bench/${name.replace(/\//g, '-')}/rule/0/match/0`,
            match: { path: { type: 'PathPrefix', value: '/' } },
            action: { kind: 'direct', status: 200, body: `${name}\n` },
          },
        ],
      },
    ],
  };
}

/**
 * Remembers chain and secret nodes by host, so successive worlds share the nodes of unchanged
 * hostnames, as the gateway builder's memo makes them share (the translation memo keys on them).
 */
export class LayoutWorld {
  private readonly chains = new Map<string, FilterChainModel>();
  private readonly secrets = new Map<string, SecretModel>();

  constructor(private readonly certs: LayoutPki) {}

  private chain(
    name: string,
    host: string | undefined,
    secretName: string,
    leaf: KeyPairPem,
  ): FilterChainModel {
    const key = `${name}|${secretName}`;
    let fc = this.chains.get(key);
    if (!fc) {
      fc = httpsChain(name, host, secretName);
      this.chains.set(key, fc);
    }
    if (!this.secrets.has(secretName)) this.secrets.set(secretName, secret(secretName, leaf));
    return fc;
  }

  /** The model of a world with exact hosts `indices` (in that order) and the given edge cases. */
  model(indices: readonly number[], edges: EdgeCases, bindPort?: number): FleetModel {
    const filterChains: FilterChainModel[] = [];
    const secretNames = new Set<string>();
    const add = (fc: FilterChainModel) => {
      filterChains.push(fc);
      for (const s of fc.secretNames) secretNames.add(s);
    };
    for (const i of indices) {
      const host = hostnameOf(i);
      add(this.chain(`ListenerSet/bench/ls-${i}/https`, host, `bench/cert-${i}`, this.certs.leaf(i)));
    }
    if (edges.wildcard) {
      add(this.chain('Gateway/infra/layout/wild', WILDCARD, 'infra/wild', this.certs.named(WILDCARD)));
      add(
        this.chain('Gateway/infra/layout/shadowed', SHADOWED, 'infra/shadowed', this.certs.named(SHADOWED)),
      );
    }
    if (edges.catchAll) {
      add(
        this.chain(
          'Gateway/infra/layout/default',
          undefined,
          'infra/default',
          this.certs.named(FALLBACK_HOST),
        ),
      );
    }
    const secrets = [...secretNames].sort().map((n) => this.secrets.get(n)!);
    return {
      fleet: LAYOUT_FLEET,
      gateway: { namespace: 'infra', name: 'layout' },
      ports: [{ name: HTTPS_PORT_NAME, port: 8443, ...(bindPort ? { bindPort } : {}), filterChains }],
      clusters: [],
      secrets,
    };
  }

  /** Replaces the certificate of host i (a new secret name, as a re-issued Secret keeps its name). */
  recertify(i: number, leaf: KeyPairPem): void {
    this.secrets.set(`bench/cert-${i}`, secret(`bench/cert-${i}`, leaf));
  }
}
