import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FleetFeed } from '../../src/fleetpage/feed';
import { FLEET_PATHS, fleetAssetDir, fleetPages } from '../../src/fleetpage/assets';
import type { FleetView } from '../../src/fleetpage/view';

function viewWith(nodes: string[]): FleetView {
  return {
    gateways: [],
    otherEnvoys: nodes.map((node) => ({
      node,
      fleet: 'default/x',
      variant: 'delta',
      connectedSince: '2026-03-01T00:00:00.000Z',
      held: false,
      stalled: false,
      types: [],
      health: 'ok',
    })),
    rejections: [],
    recentNacks: [],
    expiringCertificates: [],
  };
}

describe('FleetFeed', () => {
  test('sends the current view on subscribe, then only views that changed', () => {
    let nodes = ['a'];
    let computed = 0;
    const feed = new FleetFeed(
      () => {
        computed++;
        return viewWith(nodes);
      },
      { intervalMs: 3_600_000, onError: (err) => assert.fail(String(err)) },
    );
    const got: string[] = [];
    const unsubscribe = feed.subscribe((json) => got.push(json));
    assert.equal(got.length, 1);
    assert.deepEqual(
      JSON.parse(got[0]).otherEnvoys.map((e: { node: string }) => e.node),
      ['a'],
    );
    feed.refresh();
    assert.equal(got.length, 1, 'an unchanged view is not sent again');
    nodes = ['a', 'b'];
    feed.refresh();
    assert.equal(got.length, 2);
    assert.deepEqual(
      JSON.parse(got[1]).otherEnvoys.map((e: { node: string }) => e.node),
      ['a', 'b'],
    );
    unsubscribe();
    const before = computed;
    feed.refresh();
    feed.poke();
    assert.equal(computed, before, 'nothing is computed without clients');
  });

  test('a client joining after a change does not keep that change from the clients already there', () => {
    let nodes = ['a'];
    const feed = new FleetFeed(() => viewWith(nodes), {
      intervalMs: 3_600_000,
      onError: (err) => assert.fail(String(err)),
    });
    const first: string[] = [];
    const second: string[] = [];
    const offFirst = feed.subscribe((json) => first.push(json));
    nodes = ['a', 'b'];
    const offSecond = feed.subscribe((json) => second.push(json));
    feed.refresh();
    const last = (list: string[]) => JSON.parse(list[list.length - 1]).otherEnvoys.length;
    assert.equal(last(first), 2);
    assert.equal(last(second), 2);
    assert.equal(first.length, 2);
    assert.equal(second.length, 1);
    offFirst();
    offSecond();
  });

  test('poke() recomputes shortly after; a failing computation is reported, not thrown', async () => {
    let fail = false;
    let nodes = ['a'];
    const errors: unknown[] = [];
    const feed = new FleetFeed(
      () => {
        if (fail) throw new Error('boom');
        return viewWith(nodes);
      },
      { intervalMs: 3_600_000, pokeDelayMs: 1, onError: (err) => errors.push(err) },
    );
    const got: string[] = [];
    const unsubscribe = feed.subscribe((json) => got.push(json));
    nodes = ['b'];
    feed.poke();
    for (let i = 0; i < 1000 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(got.length, 2);
    fail = true;
    feed.refresh();
    assert.equal(errors.length, 1);
    unsubscribe();
  });
});

describe('fleet page files', () => {
  const dir = fleetAssetDir();

  test('are found from the compiled module and served with their content types', () => {
    assert.ok(dir, 'web/fleet is found above the module');
    const pages = fleetPages(dir);
    assert.match(pages[FLEET_PATHS.page]().contentType, /^text\/html/);
    assert.match(pages[FLEET_PATHS.script]().contentType, /^text\/javascript/);
    assert.match(pages[FLEET_PATHS.style]().contentType, /^text\/css/);
    assert.match(pages[FLEET_PATHS.page]().body, /<script src="\/fleet\/page\.js"/);
  });

  test('a missing installation answers with a page that says so', () => {
    const pages = fleetPages(undefined);
    assert.match(pages[FLEET_PATHS.page]().body, /not installed/);
  });

  test('the script inserts text only (no HTML parsing of values) and loads nothing from elsewhere', () => {
    const script = fs.readFileSync(path.join(dir!, 'page.js'), 'utf8');
    for (const sink of [
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
      'Function(',
    ])
      assert.ok(!script.includes(sink), `page.js uses ${sink}`);
    for (const file of ['index.html', 'page.js', 'page.css']) {
      const text = fs.readFileSync(path.join(dir!, file), 'utf8');
      assert.doesNotMatch(text, /(src|href)=["']?(https?:)?\/\//, `${file} loads from another origin`);
      assert.doesNotMatch(text, /url\(\s*['"]?(https?:)?\/\//, `${file} loads from another origin`);
    }
  });
});
