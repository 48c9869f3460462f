/**
 * Test fixtures for the gateway listener/TLS tests: PEM material generated once with openssl
 * (validity 100 years; EXPIRED_* expired in 2001 on purpose) and small object builders.
 *
 * Chain: ROOT_CERT (self-signed CA) → INTERMEDIATE_CERT (CA) → LEAF_CERT (EC P-256, SANs
 * www.example.com and *.example.com, key LEAF_KEY). SELF_CERT/SELF_KEY: self-signed RSA.
 */
import { ObjectStore } from '../../src/store/store';
import type { KubeObject } from '../../src/store/objects';
import type { BuildOptions } from '../../src/gateway/resolved';
import type { Listener, ListenerSetSpec, GatewaySpec, ReferenceGrantSpec } from '../../src/gateway/api';
import type { Condition } from '../../src/status/types';

export const ROOT_CERT = `-----BEGIN CERTIFICATE-----
MIIDKTCCAhGgAwIBAgIUVSr7RNkZGTwBdMtTgDJoyyIHIpwwDQYJKoZIhvcNAQEL
BQAwGzEZMBcGA1UEAwwQQ29udm95IFRlc3QgUm9vdDAgFw0yNjExMjEyMzQyMjBa
GA8yMTI2MTAyODIzNDIyMFowGzEZMBcGA1UEAwwQQ29udm95IFRlc3QgUm9vdDCC
ASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBALnHlLvYkNWyQAEl1Vohjkdh
K49D+YJC2FmOUHEwa/LTzrr19VdhjZCj8nL7z1YjEOcTM/W1cXUhe0hPr6ICg0/N
5JPp0T8Cf1Zi4aaJu0wxsrYXxfVEa05TY5oqFh+XXvQiOx86UD1v5phEFzUB833P
DwzZCc1rXhgMA9SPnGLIcrut2XQFZr3ypOrVRQqsJu53NwIpe3DEZddI5AEEZJyA
dtA7pAOS0wmRvzlFIIrJehANahj9gIqeU+H8v+tbJqutpWRENNS7wpLaWmTEtRzw
cxMwxC2PU5iDRL6Ruoh/rgajG6xnpAiXatzghZRHnX0bdUMgNIf33r8uGFqlCMEC
AwEAAaNjMGEwHQYDVR0OBBYEFA8PO3uSy245xofEl7/XgBSs7JodMB8GA1UdIwQY
MBaAFA8PO3uSy245xofEl7/XgBSs7JodMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P
AQH/BAQDAgEGMA0GCSqGSIb3DQEBCwUAA4IBAQBy2CUzYjf4t9BEF73FagcUMkbF
kK+J6KjlXR+W3veoKDKsaATDwKHfelBBM8MTLUR3Fhe4Ye5HG0mwDJdcVlECFEaf
4bxWjzrKBCGCFmleVPD+pyFzKbNOKIY4moP8Uk82GxcZNUIkZZ9i3FAOaHNYYF0D
AiwMCOYdlOA2BJ0agHhdHBXhLcOopLs5sDtFEsG2urgVXjFGYDtTPnbpsbEZuxSu
h8L+u5YPnoyzGxAXPS6JWHqVfQvfU1uXW7bFrRA509V5dWEJ/C0qprP29KYXcCmc
4WW3JxZkkVMrur+fUYskh0tg7srqK9FNq1+6MvKROIqRX6K1zY0SG1n7NfgP
-----END CERTIFICATE-----
`;

export const INTERMEDIATE_CERT = `-----BEGIN CERTIFICATE-----
MIIDMTCCAhmgAwIBAgIUIjRAmZqvEMpbsuco1FfvBW2NNnAwDQYJKoZIhvcNAQEL
BQAwGzEZMBcGA1UEAwwQQ29udm95IFRlc3QgUm9vdDAgFw0yNjExMjEyMzQyMjBa
GA8yMTI2MTAyODIzNDIyMFowIzEhMB8GA1UEAwwYQ29udm95IFRlc3QgSW50ZXJt
ZWRpYXRlMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtdkvmyWYoL9l
uGNBqjZIVIjwOnrMEwBfWCpNNDtGygMGqRyeSslFnbgto1qoOrSBCfqYoBNlmWO8
JCBIm5Jotg4FvwqJPRG8+wvRkhO9OTo6JWtslZ/pNcGXLb4nCKOl74rMq0WNrDXS
DDppKHKTmOE6LqGMXzlEWpmE0Azf4JaELLhupjQGD1sW1d/1jQWd6oQUo3BUi7/M
4gpczEK5N0J/Q7oHhRbpRdMoNsT3bG+6NKxN3gmn36oOc1QIE1bGkGvYB+3ZTr9S
CobZAduYJHVwnyOrH+wMhv5pZQk8pTr62OtLyyMFXffDygzH0w9oPEoVlat0Ikye
FLms52G66wIDAQABo2MwYTAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIB
BjAdBgNVHQ4EFgQUTPm5CRp9QgDK3/fBn/bY66mFfNowHwYDVR0jBBgwFoAUDw87
e5LLbjnGh8SXv9eAFKzsmh0wDQYJKoZIhvcNAQELBQADggEBAD8i08tEs0yIfIdU
V6mqnITG5itwioV2MLcUhuFoOia9jb1w8PSDVbVZ2NawzumtaP0+WUIjUI/Ya+j2
fT+SyxKoGQQCM/6F3K79AmkIxms34RUMbTs7HzAMYvOsbS+thM62gaqQhlzEZgpe
pj6YrU3lr8sRn/fZNkacDIEncV3EKS8eCfFJSQMdBsr7J+f2F6eiH51VVCf5LbDO
gjICYkFSdT+K/VLiDCcoF3vaxWD8aqEc2Fj14XLP84k8O3IYxXp4hnacTwuJecy7
BKUXPmG3G34KUfrNSpHdobqkL93NjqaDOMLlEMiCmu9tDTgtsnFL+iSdZj/aVy3l
e3YFZ1Y=
-----END CERTIFICATE-----
`;

export const LEAF_CERT = `-----BEGIN CERTIFICATE-----
MIICbzCCAVegAwIBAgIUAnblPjfYvuv7QVoasWhd+dI+86MwDQYJKoZIhvcNAQEL
BQAwIzEhMB8GA1UEAwwYQ29udm95IFRlc3QgSW50ZXJtZWRpYXRlMCAXDTI2MTEy
MTIzNDIyMFoYDzIxMjYxMDI4MjM0MjIwWjAaMRgwFgYDVQQDDA93d3cuZXhhbXBs
ZS5jb20wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAT5X09h+67qpmJXQjxs5tfG
B2xR4Akm81joQ7Ln/9wHNUS8mzHXXMTuf20zO2Efp6a8XjMBlZzSQ/ynOBbkIqPI
o20wazApBgNVHREEIjAggg93d3cuZXhhbXBsZS5jb22CDSouZXhhbXBsZS5jb20w
HQYDVR0OBBYEFNTIJjAEFW2q5KEa3P1lIxwYBLGrMB8GA1UdIwQYMBaAFEz5uQka
fUIAyt/3wZ/22OuphXzaMA0GCSqGSIb3DQEBCwUAA4IBAQBrq45gbaMTADMQ+BLk
DTAeczF4dukfFwIEJ2XEJ8hYmajMGaDQ7yy33PksPocXgyw9I8WP8x0HVx7M/VDO
XYHGFPYZEowNVhzxGl1wqtZJc+GqzwwDFUCKdchC21QF+SlzzCRMVW98fr3FXydI
uMeOyCd36QA/UPcyDhBZhobuHp0KEITFdLWqCPEO7phCeb7EAMpcNLe05RT28hms
4R8Wvwq2S0S7HpqKwTHp282FHaB+6tS42solKJ8zR07abf09zpbDapX6/gnSJsAO
9BTDa4Aa5hUWJVSIvUn1YP8z2F5ODtPY5i1ytsAg0O8xFXwyQtJBbMrN/LmX7i56
1WVU
-----END CERTIFICATE-----
`;

export const LEAF_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgj2weyFLTq1up4s+6
Vu/UGeDHAEbmdW0wkgmCKnY1xq+hRANCAAT5X09h+67qpmJXQjxs5tfGB2xR4Akm
81joQ7Ln/9wHNUS8mzHXXMTuf20zO2Efp6a8XjMBlZzSQ/ynOBbkIqPI
-----END PRIVATE KEY-----
`;

export const SELF_CERT = `-----BEGIN CERTIFICATE-----
MIIDNjCCAh6gAwIBAgIURqFb/ReeZiXHMAbNjRD4g18HeiYwDQYJKoZIhvcNAQEL
BQAwGzEZMBcGA1UEAwwQc2VsZi5leGFtcGxlLmNvbTAgFw0yNjExMjEyMzQyMjBa
GA8yMTI2MTAyODIzNDIyMFowGzEZMBcGA1UEAwwQc2VsZi5leGFtcGxlLmNvbTCC
ASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBANQ1bzlsTfqpNZ+q8z2AhV3p
i1Foafn+UDv4NWMIs/I2xg7j01tpZjP2k17Sx3jQWRywaiNowzMNuwN39BnsVPBL
Cq+6D26cqfhYAqg6PrQEkFrc6fQdDUTdAbH0XcudCTeRhs7M/1NMzU9YnWcXOwIg
m+QFIXDT1WUC00vOEbKR3K8lEY4LUuLxlQUXOc66iSzOvPEMaItfvJxsHoEuVSSx
UeuoaJS6+0/5WEc0dz3bWi5LKzPhwVg/iL9TO/+VsB6mO9ZQ/GcaUU+eI3EWtIL4
3cihgcg1uHv4EvXwbhA1EFnJOz+JOrbaiioexXllju+XEb7WCE3cqCDM7dIuWX8C
AwEAAaNwMG4wHQYDVR0OBBYEFM9hEp4nu2IFuzZZ993/jWu98nlpMB8GA1UdIwQY
MBaAFM9hEp4nu2IFuzZZ993/jWu98nlpMA8GA1UdEwEB/wQFMAMBAf8wGwYDVR0R
BBQwEoIQc2VsZi5leGFtcGxlLmNvbTANBgkqhkiG9w0BAQsFAAOCAQEA0Bos4UuB
csrTrKEt6y03nnxbYO49rc6JZPvUEuFhBkuyA2kKKwR81jkEwGDm3PivD6G5tpXK
EjiTH3lxKpQP1UKll/d0AdIXwV3/fsNDl1DeFqVNstqVk5U+HNVQuH5N5TkwnmjI
0Ku9/2ATOkoH2N/BrkwEt7JYW4GgxRhIOV+IQcd7f+tTBtV7pjNa7SqXJ2CJ70cx
ISFfmZ0H0B175GLmw6fcKbPkvVic1g90QHkmphZiCuoMTHGi23D/mdf5CHF11s38
WGJlLXdxQZZteO+G9vuf9/O1itl1KvtJLo8BB+BHJB/pCb4DrXCdX5KW3K/gaNyf
V7I9NttaGu9Pgw==
-----END CERTIFICATE-----
`;

export const SELF_KEY = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDUNW85bE36qTWf
qvM9gIVd6YtRaGn5/lA7+DVjCLPyNsYO49NbaWYz9pNe0sd40FkcsGojaMMzDbsD
d/QZ7FTwSwqvug9unKn4WAKoOj60BJBa3On0HQ1E3QGx9F3LnQk3kYbOzP9TTM1P
WJ1nFzsCIJvkBSFw09VlAtNLzhGykdyvJRGOC1Li8ZUFFznOuokszrzxDGiLX7yc
bB6BLlUksVHrqGiUuvtP+VhHNHc921ouSysz4cFYP4i/Uzv/lbAepjvWUPxnGlFP
niNxFrSC+N3IoYHINbh7+BL18G4QNRBZyTs/iTq22ooqHsV5ZY7vlxG+1ghN3Kgg
zO3SLll/AgMBAAECggEAES12IGbU9RpnXdJfuDXEFfMGtQNHuNXONtyDrc2Ri2TF
qYTlofupK0GlckKLpQrwe7MIFG+xhVtyLPizyLlpsr3QUqM0Bpcl5xVwuZ9lXfsU
mFZTldAYN9/P+FC4mvfOPDJKgEj1zg9keyzIKQUnYKe1FsMXjuOG3ZNZ+UPoCNVB
6t8BRRH1OlqTiccSQQQL9j7HvuwiD+WCk+cWI/B2sro1rblv2GOIU9b3hW3k9fqM
vgeyuOI84mxKK+Pd0rcFRn8938bkeM/hR5kUVqcgQbrHbRahHf0Z19xnGIt+l5gn
ZxXAd7S0xkjgHuu94VNQl7/QxdTAFNetAkcdIIIEoQKBgQD/3CUvsjvwmW/BRvhB
Ork3DJ5X5D9vuero/qbgIU3u8t4t3rlxGM6aXza+ukbeCRsaOaWfqVEd7nus66QE
bQMRbjDxyrIMb8k7cxKoZnFi9LHSxhBBDhZM9Md0e0qIBzM+7GgTU/hqYmNNakh6
6peqNKzK/h1iH9BfAI5LLnDrsQKBgQDUUywUCqfxsKPzF5tsMjknjK6Ji9E4IQ0+
3sm6utvhbqHZ+u2i5ipm26htbNFNKQACi6r2NT/qp+kuMRtfmObgPqULjXEU8djH
Id81X1Ay3ydIZgVlXz7X0TQMHr1L2hDfy89MbZuyUJ9FQJd4l1YTrjQ6ao71udu/
NiWq0C1ULwKBgQCaXcPBxxMK0kfuoFbfZAKjB+XwuTDcw5rK//jGeNGAPN93ZU0U
wxbDZHavE8v14iCL7gPTFGBwYpYTegf2855KQeUdvGE3x6ntSDwVhdkbDu7Kb90W
ot0piPVdfZU2BMISUKdqIdtatAmdh2Y7YpYmhqlJv48SyIb7CmbPTTGrwQKBgQDC
TvtfvADGJqljpo8ODUhQ8WYpalMl0tmUV761rJvdSqnEGueu1ISpbQxOV++TdZoU
ukzS1RiRXuj+5OHwMrXXMn1IfUCnskx4sH7dEUULyTzh/Lujce7JAyNmlBsYd5BJ
vvMPNp/uJ+oaLmpwac7UY/BYJXx/VH/OFXeTQsC48QKBgDBu09oVTcwYnpEBd0pY
SXnsSTxh0+0Hw0VrXmrGs/NzB5QGIor7JGB70bVlnMgOphrv2U/lGXGTNs1m5r5Z
rqLGeT5lZxr7Gp93OAe5ftCDLQBsYQDc7Qe2ytI7yFyMJnvE7SHNwkzqKJID5baw
fX7l36pgt7ME8YeTeO722vzi
-----END PRIVATE KEY-----
`;

export const EXPIRED_CERT = `-----BEGIN CERTIFICATE-----
MIIBHDCBwgIBATAKBggqhkjOPQQDAjAaMRgwFgYDVQQDDA9vbGQuZXhhbXBsZS5j
b20wHhcNMDAwMTAxMDAwMDAwWhcNMDEwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9v
bGQuZXhhbXBsZS5jb20wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATCvRAeLZnM
ibleUF2Qase3WBw4Xk+4LaKIoEYWofd7FiLd4oOx3MVlCLRdSoHuOX0QeLCLgPdA
UcSsUVc1P5zjMAoGCCqGSM49BAMCA0kAMEYCIQCWbhOEg6htFVB6md4z4Ir5znq2
KYRbry/jIdO6sqKiKQIhALCymUwV7cbP+HA+Ft8CQTApJ6qko6dU7bUvjI+zQc/S
-----END CERTIFICATE-----
`;

export const EXPIRED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgb1HdMEzTmSBlwMnj
ZrpyVefm134gR2SzTrV8H8AiFl2hRANCAATCvRAeLZnMibleUF2Qase3WBw4Xk+4
LaKIoEYWofd7FiLd4oOx3MVlCLRdSoHuOX0QeLCLgPdAUcSsUVc1P5zj
-----END PRIVATE KEY-----
`;

export const CONTROLLER = 'convoy.dev/gateway-controller';
export const NOW = '2026-09-01T00:00:00Z';
export const OPTS: BuildOptions = { controllerName: CONTROLLER, now: NOW };

export function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

export function store(...objects: KubeObject[]): ObjectStore {
  const s = new ObjectStore();
  for (const o of objects) s.put(o);
  return s;
}

export function gatewayClass(name = 'convoy', controllerName = CONTROLLER, generation = 1): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name, generation },
    spec: { controllerName },
  };
}

export function gateway(
  name: string,
  listeners: Listener[],
  extra: Partial<GatewaySpec> = {},
  meta: { namespace?: string; generation?: number; className?: string } = {},
): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: meta.namespace ?? 'infra', generation: meta.generation ?? 1 },
    spec: { gatewayClassName: meta.className ?? 'convoy', listeners, ...extra },
  };
}

export function listenerSet(
  name: string,
  namespace: string,
  spec: ListenerSetSpec,
  meta: { creationTimestamp?: string; generation?: number } = {},
): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: {
      name,
      namespace,
      generation: meta.generation ?? 1,
      creationTimestamp: meta.creationTimestamp ?? '2026-01-01T00:00:00Z',
    },
    spec,
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

export function tlsSecret(
  namespace: string,
  name: string,
  cert: string = LEAF_CERT + INTERMEDIATE_CERT,
  key: string = LEAF_KEY,
  type = 'kubernetes.io/tls',
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type,
    data: { 'tls.crt': b64(cert), 'tls.key': b64(key) },
  };
}

export function referenceGrant(namespace: string, name: string, spec: ReferenceGrantSpec): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace },
    spec,
  };
}

export function http(name: string, port = 80, hostname?: string, extra: Partial<Listener> = {}): Listener {
  return { name, port, protocol: 'HTTP', ...(hostname ? { hostname } : {}), ...extra };
}

export function https(
  name: string,
  secret: string,
  port = 443,
  hostname?: string,
  extra: Partial<Listener> = {},
): Listener {
  return {
    name,
    port,
    protocol: 'HTTPS',
    ...(hostname ? { hostname } : {}),
    tls: { mode: 'Terminate', certificateRefs: [{ name: secret }] },
    ...extra,
  };
}

/** "Type=Status/Reason" strings for compact assertions. */
export function summary(conditions: Condition[] | undefined): string[] {
  return (conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
}
