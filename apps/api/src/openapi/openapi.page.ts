import { createHash } from 'node:crypto';
import type { OpenApiDocument } from './openapi.document.js';

// A readable page of the document that needs nothing from outside: the machines Tether runs on
// may have no internet, so no CDN viewer. The document is embedded as JSON data and rendered by a
// small inline script that only ever sets textContent (no HTML from data). The Content-Security-
// Policy allows exactly that script and style by hash, and nothing else.

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: 16px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 4px 0; max-width: 980px; color: #cfd5e1; }
main { padding: 12px 28px 40px; max-width: 1180px; }
h2 { margin: 28px 0 10px; font-size: 18px; }
nav a { display: block; text-decoration: none; color: #1d2330; padding: 1px 0; }
.op { background: #fff; border: 1px solid #d9dde5; border-radius: 6px; margin: 12px 0; padding: 10px 14px; }
.op h3 { margin: 0; font-size: 15px; font-family: ui-monospace, monospace; }
.m { display: inline-block; min-width: 58px; text-align: center; color: #fff; border-radius: 4px;
  padding: 1px 6px; margin-right: 8px; font-size: 12px; font-weight: 600; }
.get { background: #2f7d4f; } .post { background: #2160a8; } .put { background: #a86b12; }
.delete { background: #a8323a; } .head { background: #6b7280; }
.muted { color: #5c6473; } .auth { font-size: 12px; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 13px; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid #e6e9ef; padding: 3px 6px; }
th { background: #f0f2f5; font-weight: 600; }
td.n, td.t { font-family: ui-monospace, monospace; white-space: nowrap; }
td.c { font-family: ui-monospace, monospace; font-size: 12px; color: #5c6473; word-break: break-all; }
details { border-left: 3px solid #c9d3e3; margin: 6px 0; padding: 2px 10px; }
summary { cursor: pointer; font-family: ui-monospace, monospace; }
pre { background: #f0f2f5; padding: 6px 8px; border-radius: 4px; overflow-x: auto; font-size: 12px; }
a { color: #2160a8; }
`;

const SCRIPT = `
(function () {
  'use strict';
  var doc = JSON.parse(document.getElementById('openapi-document').textContent);
  var app = document.getElementById('app');
  var METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options', 'trace'];

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function lookup(ref) {
    return ref.replace(/^#\\//, '').split('/').reduce(function (value, key) { return value && value[key]; }, doc);
  }
  function resolve(value) {
    var guard = 0;
    while (value && value.$ref && guard++ < 10) value = lookup(value.$ref);
    return value || {};
  }
  function refName(value) { return value && value.$ref ? value.$ref.split('/').pop() : null; }
  function link(name, href) {
    var a = el('a', null, name);
    a.href = href || '#schema-' + name;
    return a;
  }
  function typeText(s) {
    if (!s) return '';
    if (s.$ref) return refName(s);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map(function (v) { return JSON.stringify(v); }).join(' | ');
    if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(typeText).join(' or ');
    if (s.type === 'array') return typeText(s.items) + '[]';
    if (Array.isArray(s.type)) return s.type.join(' | ');
    return s.type || 'any';
  }
  function constraints(s) {
    var out = [];
    if (!s) return '';
    if (s.minLength !== undefined) out.push('minLength ' + s.minLength);
    if (s['x-max-bytes'] !== undefined) out.push('max ' + s['x-max-bytes'] + ' bytes');
    else if (s.maxLength !== undefined) out.push('maxLength ' + s.maxLength);
    if (s.minimum !== undefined) out.push('min ' + s.minimum);
    if (s.maximum !== undefined) out.push('max ' + s.maximum);
    if (s.minItems !== undefined) out.push('minItems ' + s.minItems);
    if (s.maxItems !== undefined) out.push('maxItems ' + s.maxItems);
    if (s.uniqueItems) out.push('unique');
    if (s.pattern) out.push('pattern ' + s.pattern);
    if (s.not && s.not.enum) out.push('not ' + s.not.enum.map(function (v) { return JSON.stringify(v); }).join(', '));
    if (s.contentEncoding) out.push(s.contentEncoding);
    if (s.anyOf) s.anyOf.forEach(function (v) { var c = constraints(v); if (c) out.push(typeText(v) + ': ' + c); });
    if (s.type === 'array' && s.items && !s.items.$ref && s.items.type !== 'object') {
      var inner = constraints(s.items);
      if (inner) out.push('each: ' + inner);
    }
    return out.join('; ');
  }
  function rows(schema, prefix, into) {
    var s = resolve(schema);
    var required = s.required || [];
    Object.keys(s.properties || {}).forEach(function (name) {
      var p = s.properties[name];
      into.push({ name: prefix + name, schema: p, required: required.indexOf(name) !== -1 });
      if (p.$ref) return;
      if (p.type === 'object' && p.properties) rows(p, prefix + name + '.', into);
      if (p.type === 'array' && p.items && p.items.type === 'object') rows(p.items, prefix + name + '[].', into);
      if (p.oneOf && !p.oneOf[0].$ref) {
        p.oneOf.forEach(function (variant, i) {
          rows(variant, prefix + name + ' [' + (variant.description || 'variant ' + (i + 1)).replace(/\\.$/, '') + '].', into);
        });
      }
    });
    return into;
  }
  function fieldsTable(schema) {
    var table = el('table');
    var head = add(el('tr'), el('th', null, 'field'), el('th', null, 'type'), el('th', null, 'required'),
      el('th', null, 'bounds'), el('th', null, 'description'));
    add(table, head);
    rows(schema, '', []).forEach(function (row) {
      var typeCell = el('td', 't');
      var name = refName(row.schema) || (row.schema.items && refName(row.schema.items));
      if (name) add(typeCell, link(name), row.schema.type === 'array' ? document.createTextNode('[]') : null);
      else typeCell.textContent = typeText(row.schema);
      add(table, add(el('tr'), el('td', 'n', row.name), typeCell, el('td', null, row.required ? 'yes' : ''),
        el('td', 'c', constraints(row.schema)), el('td', null, row.schema.description || '')));
    });
    return table;
  }
  function example(value) { return el('pre', null, JSON.stringify(value, null, 2)); }
  function bodySection(body) {
    var section = el('div');
    var media = Object.keys(body.content || {})[0];
    var content = body.content[media];
    var schema = resolve(content.schema);
    add(section, el('h4', null, 'Request body (' + media + ')'), el('p', 'muted', body.description || ''));
    if (schema.oneOf && schema.discriminator) {
      add(section, el('p', null, schema.description || ''),
        el('p', null, 'One of ' + schema.oneOf.length + ' members, keyed by "' + schema.discriminator.propertyName + '":'));
      schema.oneOf.forEach(function (member) {
        var m = resolve(member);
        var details = el('details');
        details.id = 'action-' + m.title;
        add(details, el('summary', null, (m.title || refName(member)) + ' \\u2014 ' + (m.description || '')));
        add(details, fieldsTable(member));
        if (m.anyOf) add(details, el('p', 'muted', 'Also: ' + m.anyOf.map(function (v) {
          return 'required ' + (v.required || []).join(', ');
        }).join(' or ') + '.'));
        if (m.dependentRequired) Object.keys(m.dependentRequired).forEach(function (k) {
          add(details, el('p', 'muted', k + ' requires ' + m.dependentRequired[k].join(', ') + '.'));
        });
        if (m.examples) add(details, example(m.examples[0]));
        add(section, details);
      });
    } else {
      add(section, fieldsTable(content.schema));
      if (content.example) add(section, example(content.example));
    }
    return section;
  }
  function responsesTable(responses) {
    var table = add(el('table'), add(el('tr'), el('th', null, 'status'), el('th', null, 'description'),
      el('th', null, 'body')));
    Object.keys(responses).forEach(function (code) {
      var r = resolve(responses[code]);
      var bodyCell = el('td', 't');
      var media = r.content && Object.keys(r.content)[0];
      if (media) {
        var schema = r.content[media].schema;
        var data = schema && schema.properties && schema.properties.data;
        if (data) {
          add(bodyCell, document.createTextNode('{code, message, data: '));
          var name = refName(data) || (data.items && refName(data.items));
          if (name) add(bodyCell, link(name), data.type === 'array' ? document.createTextNode('[]') : null);
          else bodyCell.appendChild(document.createTextNode(typeText(data)));
          bodyCell.appendChild(document.createTextNode('}'));
        } else if (refName(schema)) add(bodyCell, link(refName(schema)));
        else bodyCell.textContent = media;
      }
      add(table, add(el('tr'), el('td', 'n', code), el('td', null, r.description || ''), bodyCell));
    });
    return table;
  }
  function parametersTable(parameters) {
    var table = add(el('table'), add(el('tr'), el('th', null, 'name'), el('th', null, 'in'),
      el('th', null, 'required'), el('th', null, 'bounds'), el('th', null, 'description')));
    parameters.forEach(function (p) {
      p = resolve(p);
      add(table, add(el('tr'), el('td', 'n', p.name), el('td', null, p.in), el('td', null, p.required ? 'yes' : ''),
        el('td', 'c', constraints(p.schema)), el('td', null, p.description || '')));
    });
    return table;
  }

  var header = el('header');
  add(header, el('h1', null, doc.info.title + ' \\u2014 API ' + doc.info.version),
    el('p', null, 'OpenAPI ' + doc.openapi + '. ' + (doc.info.description || '')),
    add(el('p', null, 'Machine-readable: '), link('openapi.json', 'openapi.json')));
  document.body.insertBefore(header, app);

  var nav = el('nav');
  var ops = [];
  Object.keys(doc.paths).forEach(function (path) {
    var item = doc.paths[path];
    METHODS.forEach(function (method) { if (item[method]) ops.push({ path: path, method: method, op: item[method], item: item }); });
  });
  add(app, el('h2', null, 'Operations'), nav);
  ops.forEach(function (entry) {
    var id = 'op-' + entry.op.operationId;
    var a = el('a', null, entry.method.toUpperCase() + ' ' + entry.path + ' \\u2014 ' + entry.op.summary);
    a.href = '#' + id;
    nav.appendChild(a);
    var card = el('section', 'op');
    card.id = id;
    add(card, add(el('h3'), el('span', 'm ' + entry.method, entry.method.toUpperCase()), document.createTextNode(entry.path)),
      el('p', null, entry.op.summary), entry.op.description ? el('p', 'muted', entry.op.description) : null);
    var security = entry.op.security || doc.security || [];
    var auth = security.length === 0 ? 'No authentication.' : 'Bearer JWT' +
      (entry.op['x-permissions'] ? ', permissions: ' + entry.op['x-permissions'].join(', ') : '') + '.';
    add(card, el('p', 'auth', auth));
    var parameters = (entry.item.parameters || []).concat(entry.op.parameters || []);
    if (parameters.length) add(card, el('h4', null, 'Parameters'), parametersTable(parameters));
    if (entry.op.requestBody) add(card, bodySection(resolve(entry.op.requestBody)));
    add(card, el('h4', null, 'Responses'), responsesTable(entry.op.responses));
    app.appendChild(card);
  });

  add(app, el('h2', null, 'Schemas'));
  Object.keys(doc.components.schemas).forEach(function (name) {
    if (/^EdgeAgentRequest_/.test(name)) return;
    var s = doc.components.schemas[name];
    var card = el('section', 'op');
    card.id = 'schema-' + name;
    add(card, el('h3', null, name), s.description ? el('p', 'muted', s.description) : null);
    if (s.properties) add(card, fieldsTable(s));
    else if (s.enum) add(card, el('p', 't', s.enum.join(' | ')));
    else if (s.oneOf) add(card, el('p', null, 'One of: ' + s.oneOf.map(refName).join(', ') + ' (see POST /api/v1/edge-agents).'));
    app.appendChild(card);
  });
})();
`;

/** `<` never appears raw inside the embedded JSON, so it cannot close the script element. */
function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026');
}

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export interface OpenApiPage {
  html: string;
  contentSecurityPolicy: string;
}

export function renderOpenApiPage(document: OpenApiDocument): OpenApiPage {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${document.info.title} — API reference</title>
<style>${STYLE}</style>
</head>
<body>
<main id="app"><noscript>This page renders openapi.json with a small script; enable JavaScript or read the JSON.</noscript></main>
<script type="application/json" id="openapi-document">${embedJson(document)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src ${sha256(SCRIPT)}`,
    `style-src ${sha256(STYLE)}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, contentSecurityPolicy };
}
