import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { World, GATEWAY, gatewayDocs } from './support/world';

/**
 * Issue 16: the fleet page in a real headless browser (Debian's chromium driven by playwright-core)
 * against a real `convoy serve --from-dir` and a real Envoy. The page shows a ListenerSet's listener;
 * breaking that listener's certificate turns its row red, and a listener Envoy rejects (its port is
 * taken) shows as a NACK, both live, without a reload; fixing both updates the page again.
 */

const API = 'gateway.networking.k8s.io/v1';
/** Generous: a file change, a build, an Envoy NACK, a debounce and a page update on a busy machine. */
const DEADLINE_MS = 60_000;
const SECURE = 'ListenerSet/default/extra/secure';

/** The chromium binary: $CONVOY_CHROMIUM, else Debian's. */
function chromiumPath(): string | undefined {
  for (const candidate of [process.env.CONVOY_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

const browserPath = chromiumPath();
const skip = browserPath
  ? false
  : 'no chromium found (apt-get install chromium, or set CONVOY_CHROMIUM): the fleet page browser test cannot run';

function worldDocs(w: World, retry = '0'): object[] {
  return [
    ...gatewayDocs(
      [
        { name: 'http', protocol: 'HTTP', port: w.ports.http },
        { name: 'blocked', protocol: 'HTTP', port: w.ports.https },
      ],
      { listenerSets: true, labels: { 'example.com/retry': retry } },
    ),
    {
      apiVersion: API,
      kind: 'ListenerSet',
      metadata: { name: 'extra', namespace: 'default' },
      spec: {
        parentRef: { name: GATEWAY.name, kind: 'Gateway', group: 'gateway.networking.k8s.io' },
        listeners: [
          {
            name: 'secure',
            protocol: 'HTTPS',
            port: w.ports.tls,
            hostname: 'secure.example.com',
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'secure-cert' }] },
          },
        ],
      },
    },
    {
      apiVersion: API,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        parentRefs: [{ name: 'extra', kind: 'ListenerSet', group: 'gateway.networking.k8s.io' }],
        hostnames: ['secure.example.com'],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      },
    },
  ];
}

function brokenSecretDoc(): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'secure-cert', namespace: 'default' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from('not a certificate').toString('base64'),
      'tls.key': Buffer.from('not a key').toString('base64'),
    },
  };
}

/** Holds 127.0.0.1:port (Envoy binds its listeners there in the World) until closed. */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

describe('the fleet page in a headless browser', { concurrency: false, skip }, () => {
  let w: World;
  let squatter: net.Server | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  const listenerRow = (id: string, health?: string) =>
    `#gateways tr.listener[data-listener="${id}"]${health ? `[data-health="${health}"]` : ''}`;
  /** Not red: the test CA's certificates expire within a day, so the listener is amber ("warning"). */
  const notRed = (id: string) => `${listenerRow(id)}:not([data-health="error"])`;
  const rejectionRow = () => `#rejections tr.rejection[data-resource="LDS http-${w.ports.https}"]`;
  const waitShown = async (selector: string, what: string) => {
    try {
      await page.waitForSelector(selector, { timeout: DEADLINE_MS });
    } catch (err) {
      const text = await page.locator('#fleet').innerText();
      throw new Error(`${what}: ${(err as Error).message}\npage:\n${text}\n${w.convoy.logContext(20)}`, {
        cause: err,
      });
    }
  };

  before(async () => {
    w = await World.create('delta');
    await w.addBackend('web');
    squatter = await occupy(w.ports.https);
    w.write('00-gateway.yaml', worldDocs(w));
    w.write('01-services.yaml', w.serviceDocs('web'));
    w.write('02-secret.yaml', [w.tlsSecretDoc('secure-cert', 'secure.example.com')]);
    await w.startConvoy();
    await w.startEnvoy();
    const { chromium } = await import('playwright-core');
    // Root (CI) cannot use chromium's user-namespace sandbox.
    browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => (squatter ? squatter.close(r) : r(undefined)));
    await w?.dispose();
  });

  test('shows the ListenerSet listener and the NACK of the listener whose port is taken', async () => {
    await page.goto(`http://127.0.0.1:${w.convoy.adminPort}/fleet`);
    await waitShown('#connection[data-state="live"]', 'the event stream to connect');
    await waitShown(notRed(SECURE), 'the ListenerSet listener, serving');
    // The test CA's certificates expire within a day: listed as expiring soon.
    await waitShown(`#expiring tr.certificate[data-listener="${SECURE}"]`, 'the certificate expiring soon');
    const row = page.locator(listenerRow(SECURE));
    assert.match(await row.innerText(), /ListenerSet default\/extra/);
    assert.match(await row.innerText(), /secure\.example\.com/);
    assert.match(await row.innerText(), new RegExp(`HTTPS ${w.ports.tls}`));
    // Loaded once: a marker set now survives every later update only if the page never reloads.
    await page.evaluate(() => {
      (globalThis as { fleetPageMarker?: number }).fleetPageMarker = 42;
    });
    await waitShown(rejectionRow(), 'the rejected listener in "Rejected by Envoys now"');
    assert.match(await page.locator(rejectionRow()).innerText(), /Address already in use/);
    await waitShown(
      `${listenerRow(`Gateway/default/${GATEWAY.name}/blocked`, 'error')}`,
      'the rejected listener turning red',
    );
    await waitShown('#nacks tr.nack[data-type="LDS"][data-current="true"]', 'the NACK in "Recent NACKs"');
  });

  test('breaking the certificate turns the listener red live, fixing it turns it back', async () => {
    w.write('02-secret.yaml', [brokenSecretDoc()]);
    await waitShown(listenerRow(SECURE, 'error'), 'the listener with a broken certificate turning red');
    const row = page.locator(listenerRow(SECURE));
    assert.match((await row.getAttribute('class')) ?? '', /\bhealth-error\b/);
    const background = await row
      .locator('td')
      .first()
      .evaluate((td) => getComputedStyle(td).backgroundColor);
    assert.equal(background, 'rgb(255, 235, 233)', 'an error row is drawn red');
    assert.match(await row.innerText(), /ResolvedRefs=False/);

    w.write('02-secret.yaml', [w.tlsSecretDoc('secure-cert', 'secure.example.com')]);
    await waitShown(notRed(SECURE), 'the listener turning back from red');
  });

  test('freeing the port and touching the Gateway clears the NACK, still without a reload', async () => {
    await new Promise((r) => squatter!.close(r));
    squatter = undefined;
    w.write('00-gateway.yaml', worldDocs(w, '1'));
    await waitShown('#rejections p.empty', 'the rejection to clear');
    await waitShown(listenerRow(`Gateway/default/${GATEWAY.name}/blocked`, 'ok'), 'the listener to recover');
    await waitShown(
      '#nacks tr.nack[data-type="LDS"][data-current="false"]',
      'the NACK marked as accepted since',
    );
    const marker = await page.evaluate(() => (globalThis as { fleetPageMarker?: number }).fleetPageMarker);
    assert.equal(marker, 42, 'the page was never reloaded');
    assert.deepEqual(pageErrors, []);
  });
});

declare function getComputedStyle(element: unknown): { backgroundColor: string };
