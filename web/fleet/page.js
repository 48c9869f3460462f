// Convoy's fleet page (docs/operations.md §19): renders the fleet view that /fleet/events streams
// (server-sent events) and re-renders on every update, without reloading. Plain DOM, no framework.
// Every value from the server is inserted as text (textContent, attributes), never as HTML: host
// names, route names and messages come from users and from Envoy.
'use strict';

(function () {
  const root = document.getElementById('fleet');
  const connection = document.getElementById('connection');

  /** An element with attributes and children; strings become text nodes. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.appendChild(
        typeof child === 'string' || typeof child === 'number'
          ? document.createTextNode(String(child))
          : child,
      );
    }
    return node;
  }

  /** "3s", "4m", "2h", "5d" from an ISO time, relative to now (past or future). */
  function age(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return '';
    const s = Math.floor(Math.abs(Date.now() - t) / 1000);
    if (s < 120) return s + 's';
    if (s < 7200) return Math.floor(s / 60) + 'm';
    if (s < 172800) return Math.floor(s / 3600) + 'h';
    return Math.floor(s / 86400) + 'd';
  }

  /** A span whose text is the age of `iso`, kept current by the ticker below. */
  function ageOf(iso, suffix) {
    return el(
      'span',
      { class: 'age', 'data-time': iso, 'data-suffix': suffix || '', title: iso },
      age(iso) + (suffix || ''),
    );
  }

  function table(headers, rows, emptyText) {
    if (rows.length === 0) return el('p', { class: 'empty' }, emptyText);
    return el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          headers.map((h) => el('th', {}, h)),
        ),
      ),
      el('tbody', {}, rows),
    );
  }

  /** A condition as a coloured badge, its message below. */
  function conditionBadges(conditions) {
    return conditions.map((c) => {
      const bad = health([c]);
      return el(
        'div',
        { class: 'condition', 'data-type': c.type, 'data-status': c.status },
        el('span', { class: 'badge health-' + bad, title: c.since || '' }, c.type + '=' + c.status),
        c.reason ? el('span', {}, ' ' + c.reason) : null,
        c.message && bad !== 'ok' ? el('div', { class: 'message' }, c.message) : null,
      );
    });
  }

  // The same rules as src/fleetpage/health.ts, for one condition's badge colour.
  const MUST_BE_TRUE = ['Accepted', 'Programmed', 'ResolvedRefs', 'convoy.dev/CertificateValidity'];
  const MUST_BE_FALSE = ['Conflicted', 'convoy.dev/EnvoyRejected'];
  function health(conditions) {
    for (const c of conditions) {
      if (MUST_BE_TRUE.includes(c.type) && c.status === 'False') return 'error';
      if (MUST_BE_FALSE.includes(c.type) && c.status === 'True') return 'error';
      if (c.status === 'Unknown') return 'warning';
    }
    return 'ok';
  }

  function listenerRow(l) {
    return el(
      'tr',
      { class: 'listener health-' + l.health, 'data-listener': l.id, 'data-health': l.health },
      el('td', {}, el('span', { class: 'badge health-' + l.health }, l.health)),
      el('td', {}, l.owner.kind + ' ' + l.owner.namespace + '/' + l.owner.name),
      el('td', {}, l.name),
      el('td', {}, l.protocol + ' ' + l.port),
      el('td', {}, l.hostname || '*'),
      el('td', {}, l.attachedRoutes === undefined ? '' : String(l.attachedRoutes)),
      el(
        'td',
        {},
        l.certificateNotAfter
          ? [l.certificateNotAfter.slice(0, 10) + ' (', ageOf(l.certificateNotAfter), ')']
          : '',
      ),
      el('td', {}, conditionBadges(l.conditions)),
    );
  }

  function routeRow(r) {
    return el(
      'tr',
      {
        class: 'route health-' + r.health,
        'data-route': r.kind + '/' + r.namespace + '/' + r.name,
        'data-health': r.health,
      },
      el('td', {}, el('span', { class: 'badge health-' + r.health }, r.health)),
      el('td', {}, r.kind + ' ' + r.namespace + '/' + r.name),
      el('td', {}, r.hostnames.length ? r.hostnames.join(', ') : '*'),
      el(
        'td',
        {},
        r.parents.map((p) =>
          el(
            'div',
            {},
            p.kind + ' ' + p.namespace + '/' + p.name + (p.sectionName ? ' [' + p.sectionName + ']' : ''),
            conditionBadges(p.conditions),
          ),
        ),
      ),
    );
  }

  function envoyRow(e) {
    return el(
      'tr',
      { class: 'envoy health-' + e.health, 'data-node': e.node, 'data-health': e.health },
      el('td', {}, el('span', { class: 'badge health-' + e.health }, e.health)),
      el('td', {}, e.node),
      el(
        'td',
        {},
        e.variant + (e.held ? ' (held: no snapshot)' : '') + (e.stalled ? ' (stalled: not reading)' : ''),
      ),
      el('td', {}, ageOf(e.connectedSince)),
      el(
        'td',
        {},
        e.types.map((t) =>
          el(
            'div',
            { 'data-type': t.type, 'data-state': t.state },
            el(
              'span',
              {
                class:
                  'badge health-' +
                  (t.state === 'SYNCED' ? 'ok' : t.state === 'NACKED' ? 'error' : 'warning'),
              },
              t.type + ' ' + t.state,
            ),
            t.since ? ageOf(t.since) : null,
            t.error ? el('div', { class: 'message' }, t.error) : null,
          ),
        ),
      ),
    );
  }

  function gatewaySection(g) {
    return el(
      'section',
      { class: 'gateway health-' + g.health, 'data-gateway': g.fleet, 'data-health': g.health },
      el('h2', {}, 'Gateway ' + g.fleet + ' ', el('span', { class: 'badge health-' + g.health }, g.health)),
      el('div', {}, 'class ' + g.className),
      el('div', {}, conditionBadges(g.conditions)),
      el('h3', {}, 'Listeners'),
      table(
        ['', 'Owner', 'Listener', 'Port', 'Hostname', 'Routes', 'Certificate expires', 'Conditions'],
        g.listeners.map(listenerRow),
        'No listeners.',
      ),
      g.listenerSets.length
        ? [
            el('h3', {}, 'ListenerSets'),
            table(
              ['', 'ListenerSet', 'Conditions'],
              g.listenerSets.map((s) =>
                el(
                  'tr',
                  {
                    class: 'listenerset health-' + s.health,
                    'data-listenerset': s.namespace + '/' + s.name,
                    'data-health': s.health,
                  },
                  el('td', {}, el('span', { class: 'badge health-' + s.health }, s.health)),
                  el('td', {}, s.namespace + '/' + s.name),
                  el('td', {}, conditionBadges(s.conditions)),
                ),
              ),
              '',
            ),
          ]
        : null,
      el('h3', {}, 'Routes'),
      table(['', 'Route', 'Hostnames', 'Parents'], g.routes.map(routeRow), 'No routes attached.'),
      el('h3', {}, 'Envoys'),
      table(
        ['', 'Node', 'ADS', 'Connected', 'Sync per type'],
        g.envoys.map(envoyRow),
        'No Envoy of this Gateway is connected.',
      ),
    );
  }

  function render(view) {
    const rejections = table(
      ['Gateway', 'Type', 'Resource', 'Rejected by', 'Envoy says'],
      view.rejections.map((r) =>
        el(
          'tr',
          {
            class: 'rejection health-error',
            'data-fleet': r.fleet,
            'data-resource': r.type + ' ' + r.resource,
          },
          el('td', {}, r.fleet),
          el('td', {}, r.type),
          el('td', {}, r.resource),
          el('td', {}, r.nodes.length + ' of ' + r.envoys + ': ' + r.nodes.join(', ')),
          el('td', { class: 'message' }, r.message),
        ),
      ),
      'No Envoy rejects anything.',
    );
    const nacks = table(
      ['When', 'Node', 'Gateway', 'Type', 'Version', 'Still rejected', 'Envoy says'],
      view.recentNacks.map((n) =>
        el(
          'tr',
          {
            class: 'nack health-' + (n.current ? 'error' : 'ok'),
            'data-node': n.node,
            'data-type': n.type,
            'data-current': String(n.current),
          },
          el('td', {}, ageOf(n.time, ' ago')),
          el('td', {}, n.node),
          el('td', {}, n.fleet),
          el('td', {}, n.type),
          el('td', {}, el('code', {}, n.version)),
          el('td', {}, n.current ? 'yes' : 'no (accepted since)'),
          el('td', { class: 'message' }, n.message),
        ),
      ),
      'No NACK from a connected Envoy.',
    );
    const expiring = table(
      ['Listener', 'Gateway', 'Expires'],
      view.expiringCertificates.map((c) =>
        el(
          'tr',
          { class: 'certificate health-' + (c.expired ? 'error' : 'warning'), 'data-listener': c.listener },
          el('td', {}, c.listener),
          el('td', {}, c.fleet || ''),
          el(
            'td',
            {},
            c.notAfter + ' (',
            c.expired ? ['expired ', ageOf(c.notAfter, ' ago')] : ['in ', ageOf(c.notAfter)],
            ')',
          ),
        ),
      ),
      'No certificate expires within 30 days.',
    );
    const parts = [
      el('section', { id: 'rejections' }, el('h2', {}, 'Rejected by Envoys now'), rejections),
      el('section', { id: 'expiring' }, el('h2', {}, 'Certificates expiring soon'), expiring),
      el(
        'div',
        { id: 'gateways' },
        view.gateways.length
          ? view.gateways.map(gatewaySection)
          : el('p', { class: 'empty' }, 'No Gateway of Convoy’s.'),
      ),
      view.otherEnvoys.length
        ? el(
            'section',
            { id: 'other-envoys' },
            el('h2', {}, 'Envoys of no known Gateway'),
            table(['', 'Node', 'ADS', 'Connected', 'Sync per type'], view.otherEnvoys.map(envoyRow), ''),
          )
        : null,
      el('section', { id: 'nacks' }, el('h2', {}, 'Recent NACKs'), nacks),
    ];
    root.replaceChildren(...parts.filter(Boolean));
    root.setAttribute('data-updated', new Date().toISOString());
  }

  setInterval(() => {
    for (const node of document.querySelectorAll('.age')) {
      node.textContent = age(node.getAttribute('data-time')) + (node.getAttribute('data-suffix') || '');
    }
  }, 1000);

  const events = new EventSource('/fleet/events');
  events.onopen = () => {
    connection.textContent = 'live';
    connection.setAttribute('data-state', 'live');
  };
  events.onerror = () => {
    connection.textContent = 'connection lost, reconnecting…';
    connection.setAttribute('data-state', 'lost');
  };
  events.onmessage = (message) => {
    try {
      render(JSON.parse(message.data));
    } catch (err) {
      connection.textContent = 'cannot show this update: ' + err;
      connection.setAttribute('data-state', 'lost');
    }
  };
})();
