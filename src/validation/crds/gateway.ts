/**
 * The Gateway CRD's `spec` (v1.6.1 standard channel): addresses, allowed ListenerSets,
 * infrastructure, listeners and frontend/backend TLS.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { ObjectNode, Rule } from '../schema';
import { arr, map, obj, rule, str, withRules } from '../schema';
import type { Obj } from './common';
import {
  ADDRESS_TYPE,
  HOSTNAME_RE,
  LABEL_VALUE,
  QUALIFIED_KEY_RE,
  caCertificateRefs,
  failing,
  labelSelector,
  localRef,
  port,
  secretRef,
  uniqueBy,
} from './common';
import { listeners } from './listeners';

interface Address {
  type: string;
  value?: string;
}

const labelKeyRules = (what: 'Annotation' | 'Label', whose: 'annotation' | 'label'): Rule[] => [
  // self.all(key, key.matches(r"""^([a-z0-9]…/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"""))
  rule<Obj>(
    `${what} keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.`,
    (m) => Object.keys(m).every((k) => QUALIFIED_KEY_RE.test(k)),
  ),
  // self.all(key, key.split("/")[0].size() < 253)
  rule<Obj>(
    `If specified, the ${whose} key's prefix must be a DNS subdomain not longer than 253 characters in total.`,
    (m) => Object.keys(m).every((k) => k.split('/')[0].length < 253),
  ),
];

const address = withRules(
  obj({
    type: str({ minLength: 1, maxLength: 253, pattern: ADDRESS_TYPE, default: 'IPAddress' }),
    value: str({ maxLength: 253 }),
  }),
  // self.type == 'Hostname' ? (!has(self.value) || self.value.matches(r"""<HOSTNAME>""")): true
  rule<Address>(
    'Hostname value must be empty or contain only valid characters (matching ^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)',
    (a) => a.type !== 'Hostname' || a.value === undefined || HOSTNAME_RE.test(a.value),
  ),
  {
    // oneOf: [{type: IPAddress, value: ipv4|ipv6}, {type: not IPAddress}]
    message: 'value must be an IPv4 or IPv6 address when type is IPAddress',
    structural: true,
    check: (a: Address) =>
      a.type !== 'IPAddress' || a.value === undefined || isIPv4(a.value) || isIPv6(a.value),
  } as Rule,
);

export const gatewaySpec: ObjectNode = obj(
  {
    addresses: arr(address, {
      maxItems: 16,
      rules: [
        // self.all(a1, a1.type == 'IPAddress' && has(a1.value) ? self.exists_one(a2, a2.type == a1.type && has(a2.value) && a2.value == a1.value) : true)
        rule<Address[]>('IPAddress values must be unique', (as) =>
          failing(
            as,
            (a1) =>
              !(a1.type === 'IPAddress' && a1.value !== undefined) ||
              as.filter((a2) => a2.type === a1.type && a2.value === a1.value).length === 1,
          ),
        ),
        // the same for 'Hostname'
        rule<Address[]>('Hostname values must be unique', (as) =>
          failing(
            as,
            (a1) =>
              !(a1.type === 'Hostname' && a1.value !== undefined) ||
              as.filter((a2) => a2.type === a1.type && a2.value === a1.value).length === 1,
          ),
        ),
      ],
    }),
    allowedListeners: obj({
      namespaces: obj(
        {
          from: str({ enum: ['All', 'Selector', 'Same', 'None'], default: 'None' }),
          selector: labelSelector(),
        },
        { default: { from: 'None' } },
      ),
    }),
    gatewayClassName: str({ minLength: 1, maxLength: 253 }),
    infrastructure: obj({
      annotations: map(str({ minLength: 0, maxLength: 4096 }), {
        maxProperties: 16,
        rules: labelKeyRules('Annotation', 'annotation'),
      }),
      labels: map(str({ minLength: 0, maxLength: 63, pattern: LABEL_VALUE }), {
        maxProperties: 8,
        rules: labelKeyRules('Label', 'label'),
      }),
      parametersRef: localRef(),
    }),
    listeners: listeners(false),
    tls: obj({
      backend: obj({ clientCertificateRef: secretRef() }),
      frontend: obj(
        {
          default: obj({
            validation: obj(
              {
                caCertificateRefs: caCertificateRefs(),
                mode: str({ enum: ['AllowValidOnly', 'AllowInsecureFallback'], default: 'AllowValidOnly' }),
              },
              { required: ['caCertificateRefs'] },
            ),
          }),
          perPort: arr(
            obj(
              {
                port: port(),
                tls: obj({
                  validation: obj(
                    {
                      caCertificateRefs: caCertificateRefs(),
                      mode: str({
                        enum: ['AllowValidOnly', 'AllowInsecureFallback'],
                        default: 'AllowValidOnly',
                      }),
                    },
                    { required: ['caCertificateRefs'] },
                  ),
                }),
              },
              { required: ['port', 'tls'] },
            ),
            {
              maxItems: 64,
              listType: 'map',
              listMapKeys: ['port'],
              rules: [
                // self.all(t1, self.exists_one(t2, t1.port == t2.port))
                rule<{ port: number }[]>(
                  'Port for TLS configuration must be unique within the Gateway',
                  (ps) => uniqueBy(ps, (a, b) => a.port === b.port),
                ),
              ],
            },
          ),
        },
        { required: ['default'] },
      ),
    }),
  },
  { required: ['gatewayClassName', 'listeners'] },
);
