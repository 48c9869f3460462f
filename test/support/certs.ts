/**
 * Test-only certificates and keys, generated once with openssl and committed. They protect
 * nothing; Envoy and Convoy need real key pairs. Validity 100 years, except EXPIRED_* (expired
 * in 2001 on purpose).
 *
 *  - EXAMPLE_CERT/EXAMPLE_KEY: self-signed EC P-256, SANs example.com and *.example.com;
 *  - TENANT_CERT/TENANT_KEY: self-signed EC P-256, SANs tenant.test and *.tenant.test;
 *  - ROOT_CERT (CA) → INTERMEDIATE_CERT (CA) → LEAF_CERT: EC P-256 leaf with SANs
 *    www.example.com and *.example.com, key LEAF_KEY;
 *  - SELF_CERT/SELF_KEY: self-signed RSA 2048, SAN self.example.com;
 *  - EXPIRED_CERT/EXPIRED_KEY: self-signed EC P-256, CN old.example.com, expired.
 *
 * selfSignedCert() makes a distinct certificate per hostname set at test time (openssl), for the
 * tests that need certificates whose bytes differ (rotations).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const EXAMPLE_CERT =
  '-----BEGIN CERTIFICATE-----\nMIIBqTCCAVCgAwIBAgIUdcmuObLYxgum8+a5ihLy0okV1SMwCgYIKoZIzj0EAwIw\nFjEUMBIGA1UEAwwLZXhhbXBsZS5jb20wIBcNMjYxMTIxMjM0MjMyWhgPMjEyNjEw\nMjgyMzQyMzJaMBYxFDASBgNVBAMMC2V4YW1wbGUuY29tMFkwEwYHKoZIzj0CAQYI\nKoZIzj0DAQcDQgAEBSqJiUdjqXIkfo7y+zINfawEnDBqwN6z60e+5ciQj/SDEx0H\nByWEmfCWTazR56JvTJU3vvPyNr+0ajBb5Mzq6KN6MHgwHQYDVR0OBBYEFDVBM3oB\n998SQ2AbbyC14dmiW+QVMB8GA1UdIwQYMBaAFDVBM3oB998SQ2AbbyC14dmiW+QV\nMA8GA1UdEwEB/wQFMAMBAf8wJQYDVR0RBB4wHIILZXhhbXBsZS5jb22CDSouZXhh\nbXBsZS5jb20wCgYIKoZIzj0EAwIDRwAwRAIgVL2udDGrtme9eHs2nonUITBpPXbQ\nZgHt81UWbDUg/ckCIFBc9XCNWqXsUeVZsu8D8YD89nqmt1ckNq4x5F9ARkWK\n-----END CERTIFICATE-----\n';

export const EXAMPLE_KEY =
  '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+P/qk9+7n61QJgcK\nGDdoycQ9geacguxcy10J8cfn8u+hRANCAAQFKomJR2OpciR+jvL7Mg19rAScMGrA\n3rPrR77lyJCP9IMTHQcHJYSZ8JZNrNHnom9MlTe+8/I2v7RqMFvkzOro\n-----END PRIVATE KEY-----\n';

export const TENANT_CERT =
  '-----BEGIN CERTIFICATE-----\nMIIBqzCCAVCgAwIBAgIUQdQm1c/P0Aky8DVTCVZmRlvm8EUwCgYIKoZIzj0EAwIw\nFjEUMBIGA1UEAwwLdGVuYW50LnRlc3QwIBcNMjYxMTIxMjM0MjMyWhgPMjEyNjEw\nMjgyMzQyMzJaMBYxFDASBgNVBAMMC3RlbmFudC50ZXN0MFkwEwYHKoZIzj0CAQYI\nKoZIzj0DAQcDQgAEEp50e+QA8NhK7TDwuIMaHLD7Q2QCGT+7Y3JYljp9BFj6SEf/\nshZSWi6Eaaz8lsoAp6xewXwLh5RzWkY5BXOi0KN6MHgwHQYDVR0OBBYEFO4WdcuJ\nBzDRCgHzp9VoYwrG+f5WMB8GA1UdIwQYMBaAFO4WdcuJBzDRCgHzp9VoYwrG+f5W\nMA8GA1UdEwEB/wQFMAMBAf8wJQYDVR0RBB4wHIILdGVuYW50LnRlc3SCDSoudGVu\nYW50LnRlc3QwCgYIKoZIzj0EAwIDSQAwRgIhANSFkulC84Q74UYyagI/zO9iCL5Y\n2D2gqoX3+zEd6BykAiEAvAC2xrtd56pCkrrt2UxeU0OOZ/P2eqJJjjzCQ5oLgm0=\n-----END CERTIFICATE-----\n';

export const TENANT_KEY =
  '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgyvZze8kKvqaAx0tA\n0K58i3Ha4rd7BDLgCNiPz361K7GhRANCAAQSnnR75ADw2ErtMPC4gxocsPtDZAIZ\nP7tjcliWOn0EWPpIR/+yFlJaLoRprPyWygCnrF7BfAuHlHNaRjkFc6LQ\n-----END PRIVATE KEY-----\n';

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

const certCache = new Map<string, { cert: string; key: string }>();

/** Returns a self-signed EC P-256 certificate and key for the given DNS names (cached per process). */
export function selfSignedCert(hostnames: string[]): { cert: string; key: string } {
  const cacheKey = hostnames.join(',');
  const cached = certCache.get(cacheKey);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'convoy-test-cert-'));
  try {
    const keyPath = join(dir, 'tls.key');
    const certPath = join(dir, 'tls.crt');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyPath,
        '-out',
        certPath,
        '-days',
        '3650',
        '-subj',
        `/CN=${hostnames[0] ?? 'convoy-test'}`,
        ...(hostnames.length
          ? ['-addext', `subjectAltName=${hostnames.map((h) => `DNS:${h}`).join(',')}`]
          : []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const pair = { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
    certCache.set(cacheKey, pair);
    return pair;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
