/**
 * The `listeners` list shared by the Gateway and ListenerSet CRDs: the listener schema and the
 * CEL rules over the list (the ListenerSet variant tolerates listeners without a port). The legacy
 * XListenerSet CRD (xlistenerset.ts) builds its variant from the same parts.
 */
import type { ArrayNode, IntegerNode, Rule } from '../schema';
import { arr, map, obj, rule, str, withRules } from '../schema';
import type { Obj } from './common';
import {
  PROTOCOL,
  failing,
  group,
  hostname,
  kind,
  labelSelector,
  port,
  secretRef,
  sectionName,
  uniqueBy,
} from './common';

export interface Listener {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: { mode?: string; certificateRefs?: unknown[]; options?: Obj };
}

const listenerTls = withRules(
  obj({
    certificateRefs: arr(secretRef(), { maxItems: 64 }),
    mode: str({ enum: ['Terminate', 'Passthrough'], default: 'Terminate' }),
    options: map(str({ minLength: 0, maxLength: 4096 }), { maxProperties: 16 }),
  }),
  // self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 : true
  rule<Listener['tls'] & Obj>(
    'certificateRefs or options must be specified when mode is Terminate',
    (t) =>
      t.mode !== 'Terminate' ||
      (t.certificateRefs?.length ?? 0) > 0 ||
      Object.keys(t.options ?? {}).length > 0,
  ),
);

/** Returns the listener schema with `portNode` as its port, required unless `portOptional`. */
export const listenerSchema = (portNode: IntegerNode, portOptional = false) =>
  obj(
    {
      allowedRoutes: obj(
        {
          kinds: arr(
            obj({ group: group('gateway.networking.k8s.io'), kind: kind() }, { required: ['kind'] }),
            {
              maxItems: 8,
            },
          ),
          namespaces: obj(
            {
              from: str({ enum: ['All', 'Selector', 'Same'], default: 'Same' }),
              selector: labelSelector(),
            },
            { default: { from: 'Same' } },
          ),
        },
        { default: { namespaces: { from: 'Same' } } },
      ),
      hostname: hostname(),
      name: sectionName(),
      port: portNode,
      protocol: str({ minLength: 1, maxLength: 255, pattern: PROTOCOL }),
      tls: listenerTls,
    },
    { required: portOptional ? ['name', 'protocol'] : ['name', 'port', 'protocol'] },
  );

const listener = listenerSchema(port());

const sameHostname = (a: Listener, b: Listener) =>
  a.hostname !== undefined && b.hostname !== undefined
    ? a.hostname === b.hostname
    : a.hostname === undefined && b.hostname === undefined;

/**
 * Returns the CEL rules over a listener list; `tlsModeRule` false leaves out "tls mode must be set
 * for protocol TLS", which the legacy XListenerSet CRD does not have.
 */
export function listenerRules(forListenerSet: boolean, tlsModeRule = true): Rule[] {
  const rules: Rule[] = [
    // self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)
    rule<Listener[]>("tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']", (ls) =>
      failing(ls, (l) => !['HTTP', 'TCP', 'UDP'].includes(l.protocol) || l.tls === undefined),
    ),
    // self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || l.tls.mode == 'Terminate') : true)
    rule<Listener[]>('tls mode must be Terminate for protocol HTTPS', (ls) =>
      failing(
        ls,
        (l) => !(l.protocol === 'HTTPS' && l.tls) || l.tls.mode === '' || l.tls.mode === 'Terminate',
      ),
    ),
    // self.all(l, l.protocol in ['TCP', 'UDP'] ? (!has(l.hostname) || l.hostname == '') : true)
    rule<Listener[]>("hostname must not be specified for protocols ['TCP', 'UDP']", (ls) =>
      failing(
        ls,
        (l) => !['TCP', 'UDP'].includes(l.protocol) || l.hostname === undefined || l.hostname === '',
      ),
    ),
    // self.all(l1, self.exists_one(l2, l1.name == l2.name))  (the ListenerSet CRD keeps "Gateway")
    rule<Listener[]>('Listener name must be unique within the Gateway', (ls) =>
      uniqueBy(ls, (a, b) => a.name === b.name),
    ),
    // Gateway:     self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && <same hostname>))
    // ListenerSet: self.all(l1, !has(l1.port) || self.exists_one(l2, has(l2.port) && …))
    rule<Listener[]>('Combination of port, protocol and hostname must be unique for each listener', (ls) =>
      failing(
        ls,
        (a) =>
          (forListenerSet && a.port === undefined) ||
          ls.filter(
            (b) =>
              (!forListenerSet || b.port !== undefined) &&
              a.port === b.port &&
              a.protocol === b.protocol &&
              sameHostname(a, b),
          ).length === 1,
      ),
    ),
  ];
  if (!tlsModeRule) return rules;
  // self.all(l, (l.protocol == 'TLS' ? has(l.tls) && has(l.tls.mode) && l.tls.mode != '' : true))
  const tlsMode = rule<Listener[]>('tls mode must be set for protocol TLS', (ls) =>
    failing(ls, (l) => l.protocol !== 'TLS' || (!!l.tls && l.tls.mode !== undefined && l.tls.mode !== '')),
  );
  return [...rules.slice(0, 2), tlsMode, ...rules.slice(2)];
}

export const listeners = (forListenerSet: boolean): ArrayNode =>
  arr(listener, {
    minItems: 1,
    maxItems: 64,
    listType: 'map',
    listMapKeys: ['name'],
    rules: listenerRules(forListenerSet),
  });
