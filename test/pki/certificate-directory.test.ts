import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CertificateDirectory,
  canonicalIp,
  defaultCertsDir,
  reissueReason,
  renewalTime,
  splitServerNames,
} from '../../src/pki/certificate-directory';
import type { LeafWanted } from '../../src/pki/certificate-directory';
import { certificateInfo, parseSubjectAltName } from '../../src/pki/certificate-info';
import { fleetOfIdentityUri, gatewayIdentityUri } from '../../src/pki/gateway-identity';
import { BACKDATE_MS, createCertificateAuthority, issueLeafCertificate } from '../../src/pki/x509-issuer';
import type { PemPair } from '../../src/pki/x509-issuer';
import { identityOfCertificate } from '../../src/xds/authorization';
import { formatDuration, parseDuration } from '../../src/util/duration';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function der(pem: string): Buffer {
  return new X509Certificate(pem).raw;
}

describe('Gateway identities', () => {
  test('one URI names one Gateway, exactly', () => {
    assert.equal(gatewayIdentityUri('team-a/web'), 'spiffe://convoy/gateway/team-a/web');
    assert.equal(fleetOfIdentityUri('spiffe://convoy/gateway/team-a/web'), 'team-a/web');
    assert.equal(fleetOfIdentityUri('spiffe://convoy/gateway/team-a/web.v2'), 'team-a/web.v2');
    for (const bad of [
      'spiffe://convoy/gateway/team-a',
      'spiffe://convoy/gateway/team-a/web/extra',
      'spiffe://convoy/gateway/team-a/*',
      'spiffe://convoy/gateway/*/*',
      'spiffe://convoy/gateway/Team-A/web',
      'spiffe://convoy/gateway/team-a/web?x=1',
      'spiffe://convoy/gateway/team%2Da/web',
      'spiffe://other/gateway/team-a/web',
      'https://convoy/gateway/team-a/web',
      'spiffe://convoy/gateway/../team-a/web',
    ]) {
      assert.equal(fleetOfIdentityUri(bad), undefined, bad);
    }
    assert.throws(() => gatewayIdentityUri('web'), /expected NAMESPACE\/NAME/);
  });

  test("Node's subjectAltName text: a quoted value with a comma stays one name", () => {
    assert.deepEqual(
      parseSubjectAltName('DNS:a.example, IP Address:127.0.0.1, URI:spiffe://convoy/gateway/a/b'),
      {
        dnsNames: ['a.example'],
        ipAddresses: ['127.0.0.1'],
        uris: ['spiffe://convoy/gateway/a/b'],
      },
    );
    const smuggled = parseSubjectAltName(
      'URI:"spiffe://convoy/gateway/a/b, URI:spiffe://convoy/gateway/x/y"',
    );
    assert.deepEqual(smuggled.uris, ['spiffe://convoy/gateway/a/b, URI:spiffe://convoy/gateway/x/y']);
    assert.equal(fleetOfIdentityUri(smuggled.uris[0]!), undefined);
    assert.deepEqual(parseSubjectAltName(undefined), { dnsNames: [], ipAddresses: [], uris: [] });
  });
});

describe('durations', () => {
  test('parse and format', () => {
    assert.equal(parseDuration('90d'), 90 * DAY);
    assert.equal(parseDuration('1h30m'), 90 * 60_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(formatDuration(90 * 60_000), '1h30m');
    assert.equal(formatDuration(300), '300ms');
    for (const bad of ['', '10', 'h', '1x', '1h 2m', '-1s'])
      assert.throws(() => parseDuration(bad, '--x'), /--x: expected a duration/);
  });
});

describe('issuing and checking certificates', () => {
  let ca: PemPair;
  let otherCa: PemPair;
  let caCert: X509Certificate;
  const now = new Date('2030-01-01T00:00:00Z');
  const client: LeafWanted = {
    kind: 'client',
    dnsNames: [],
    ipAddresses: [],
    uris: [gatewayIdentityUri('a/b')],
  };

  before(async () => {
    ca = await createCertificateAuthority({ commonName: 'test CA', validityMs: 3650 * DAY, now });
    otherCa = await createCertificateAuthority({ commonName: 'other CA', validityMs: 3650 * DAY, now });
    caCert = new X509Certificate(ca.certPem);
  });

  const leaf = (req: Partial<Parameters<typeof issueLeafCertificate>[1]> = {}, signer = ca) =>
    issueLeafCertificate(signer, {
      commonName: 'a/b',
      usage: 'client',
      uris: [gatewayIdentityUri('a/b')],
      validityMs: 7 * DAY,
      now,
      ...req,
    });

  test('a CA certificate: ECDSA P-256, CA:TRUE, path length 0, backdated', () => {
    const x = new X509Certificate(ca.certPem);
    assert.ok(x.ca);
    assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(new Date(x.validFrom).getTime(), now.getTime() - BACKDATE_MS);
  });

  test('a client certificate: clientAuth only, its Gateway URI, signed by the CA, never outliving it', async () => {
    const p = await leaf({ validityMs: 100 * 365 * DAY });
    const x = new X509Certificate(p.certPem);
    assert.ok(x.verify(caCert.publicKey));
    assert.ok(x.checkIssued(caCert));
    assert.equal(x.ca, false);
    assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.equal(x.subjectAltName, 'URI:spiffe://convoy/gateway/a/b');
    assert.equal(new Date(x.validTo).getTime(), new Date(caCert.validTo).getTime());
  });

  test('reissueReason: every reason, and none for a good certificate', async () => {
    const good = await leaf();
    assert.equal(reissueReason(good, caCert, client, now), undefined);
    assert.equal(reissueReason(undefined, caCert, client, now), 'missing');
    const other = await leaf();
    assert.equal(
      reissueReason({ certPem: good.certPem, keyPem: other.keyPem }, caCert, client, now),
      'the key does not match the certificate',
    );
    assert.match(
      reissueReason({ certPem: 'garbage', keyPem: good.keyPem }, caCert, client, now)!,
      /^unreadable/,
    );
    assert.equal(reissueReason(await leaf({}, otherCa), caCert, client, now), 'not issued by the current CA');
    assert.equal(
      reissueReason(await leaf({ usage: 'server' }), caCert, client, now),
      'not a client certificate',
    );
    assert.equal(
      reissueReason(await leaf({ uris: [] }), caCert, client, now),
      'lacks spiffe://convoy/gateway/a/b',
    );
    assert.match(
      reissueReason(
        await leaf({ uris: [gatewayIdentityUri('a/b'), gatewayIdentityUri('x/y')] }),
        caCert,
        client,
        now,
      )!,
      /names more than its Gateway/,
    );
    const info = certificateInfo(good.certPem);
    assert.equal(reissueReason(good, caCert, client, new Date(now.getTime() - HOUR)), 'not valid yet');
    assert.equal(reissueReason(good, caCert, client, info.notAfter), 'expired');
    assert.match(reissueReason(good, caCert, client, renewalTime(info))!, /^due for renewal/);
    assert.equal(reissueReason(good, caCert, client, new Date(renewalTime(info).getTime() - 1)), undefined);
  });

  test('renewal is due two thirds into the lifetime, counted from issuance', async () => {
    const info = certificateInfo((await leaf({ validityMs: 3 * DAY })).certPem);
    assert.equal(renewalTime(info).getTime(), now.getTime() + 2 * DAY);
  });

  test('server names: IPs are canonical, host names lower case', () => {
    assert.equal(canonicalIp('0:0:0:0:0:0:0:1'), '::1');
    assert.deepEqual(splitServerNames(['Convoy.Local', '10.0.0.1', '[::1]', '::1', 'fd00::0:1']), {
      dnsNames: ['convoy.local'],
      ipAddresses: ['10.0.0.1', '::1', 'fd00::1'],
    });
  });

  test('identityOfCertificate: Gateway URIs of a client certificate, nothing from a server certificate', async () => {
    const both = await leaf({
      uris: [gatewayIdentityUri('a/b'), gatewayIdentityUri('c/d'), 'spiffe://other/x'],
    });
    assert.deepEqual([...identityOfCertificate(der(both.certPem)).fleets!].sort(), ['a/b', 'c/d']);
    const server = await leaf({ usage: 'server', dnsNames: ['localhost'] });
    const id = identityOfCertificate(der(server.certPem));
    assert.equal(id.fleets!.size, 0);
    assert.match(id.description, /not for client authentication/);
    const rogue = await leaf({ commonName: 'rogue', uris: [] });
    assert.equal(identityOfCertificate(der(rogue.certPem)).fleets!.size, 0);
  });
});

describe('CertificateDirectory', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-certdir-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('creates the CA once; the key is private; a half-present CA is an error', async () => {
    const root = path.join(dir, 'one');
    const certs = new CertificateDirectory(root);
    await assert.rejects(certs.ensureCa({ create: false }), /no CA in/);
    assert.deepEqual(await certs.ensureCa({ create: true }), { created: true });
    assert.deepEqual(await new CertificateDirectory(root).ensureCa({ create: true }), { created: false });
    assert.equal(fs.statSync(certs.caKeyFile).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(certs.caKeyFile)).mode & 0o777, 0o700);
    fs.renameSync(certs.caKeyFile, `${certs.caKeyFile}.moved`);
    await assert.rejects(
      new CertificateDirectory(root).ensureCa({ create: true }),
      /has ca.crt but no ca.key/,
    );
    fs.renameSync(`${certs.caKeyFile}.moved`, certs.caKeyFile);
  });

  test('server and client certificates: issued once, renewed when due with the same lifetime and names', async () => {
    const certs = new CertificateDirectory(path.join(dir, 'two'));
    await certs.ensureCa({ create: true });
    const s1 = await certs.ensureServer(['convoy-xds.ns.svc']);
    assert.equal(s1.action, 'issued');
    assert.deepEqual(s1.info.dnsNames.sort(), ['convoy-xds.ns.svc', 'localhost']);
    // serve asks for fewer names than certgen did: the certificate stays.
    assert.equal((await certs.ensureServer([])).action, 'current');
    const g1 = await certs.ensureGateway('a/b', { validityMs: 2 * HOUR });
    assert.equal(g1.action, 'issued');
    assert.equal(fs.statSync(g1.files.keyFile).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(g1.files.caFile, 'utf8'), fs.readFileSync(certs.caCertFile, 'utf8'));
    assert.equal((await certs.ensureGateway('a/b')).action, 'current');
    assert.deepEqual(certs.gateways(), ['a/b']);

    const later = new Date(g1.renewAt.getTime() + 1_000);
    const renewed = await certs.renewDue(later);
    const byName = new Map(renewed.map((r) => [r.subject, r]));
    assert.equal(byName.get('server')?.result?.action, 'current');
    const g2 = byName.get('a/b')?.result;
    assert.equal(g2?.action, 'renewed');
    assert.match(g2!.reason!, /due for renewal/);
    assert.notEqual(g2!.info.serialNumber, g1.info.serialNumber);
    assert.equal(g2!.info.notAfter.getTime() - later.getTime(), 2 * HOUR, 'same lifetime as before');

    const s2 = await certs.ensureServer([], { now: new Date(s1.renewAt.getTime() + 1_000) });
    assert.equal(s2.action, 'renewed');
    assert.ok(s2.info.dnsNames.includes('convoy-xds.ns.svc'), 'names added by certgen are kept');
  });

  test('a CA replaced by hand: every leaf is reissued and its ca.crt follows', async () => {
    const root = path.join(dir, 'three');
    const certs = new CertificateDirectory(root);
    await certs.ensureCa({ create: true });
    await certs.ensureGateway('a/b');
    fs.rmSync(path.join(root, 'ca'), { recursive: true });
    const fresh = new CertificateDirectory(root);
    await fresh.ensureCa({ create: true });
    const r = await fresh.ensureGateway('a/b');
    assert.equal(r.action, 'renewed');
    assert.equal(r.reason, 'not issued by the current CA');
    assert.equal(fs.readFileSync(r.files.caFile, 'utf8'), fs.readFileSync(fresh.caCertFile, 'utf8'));
  });

  test('concurrent issuers in one folder end with a matching key and certificate', async () => {
    const root = path.join(dir, 'four');
    await new CertificateDirectory(root).ensureCa({ create: true });
    const runs = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const c = new CertificateDirectory(root);
        await c.ensureCa({ create: false });
        return c.ensureGateway('x/y');
      }),
    );
    assert.equal(runs.filter((r) => r.action === 'issued').length, 1, 'issued once, the others found it');
    const files = runs[0]!.files;
    const cert = new X509Certificate(fs.readFileSync(files.certFile));
    assert.ok(
      cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(fs.readFileSync(files.keyFile))),
    );
    assert.ok(!fs.existsSync(path.join(root, '.lock')));
  });

  test('the default folder follows XDG_STATE_HOME', () => {
    assert.equal(defaultCertsDir({ XDG_STATE_HOME: '/var/state' }), '/var/state/convoy/xds-pki');
    assert.equal(defaultCertsDir({}), path.join(os.homedir(), '.local', 'state', 'convoy', 'xds-pki'));
  });
});
