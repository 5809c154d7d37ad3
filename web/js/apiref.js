// The HTTP API reference: renders the server's OpenAPI document (its paths, parameters,
// bodies and responses, and the schemas they name) with no library, so that the page
// needs nothing but this server.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const child of children) {
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

const anchor = (method, path) => `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');

// A schema in a line or a few: a reference links to its schema, an object lists its
// fields (a required one in bold), an alternative each of its branches.
function schemaView(schema) {
  if (schema === true || schema === undefined) return el('code', {}, 'any');
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop();
    return el('a', { href: `#schema-${name}` }, name);
  }
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    if (Array.isArray(schema[key])) {
      const list = el('ul', { class: 'apiref-alt' });
      for (const branch of schema[key]) list.append(el('li', {}, schemaView(branch)));
      const word = { oneOf: 'one of', anyOf: 'any of', allOf: 'all of' }[key];
      return el('div', {}, el('em', {}, word), list);
    }
  }
  if (schema.const !== undefined) return el('code', {}, JSON.stringify(schema.const));
  if (schema.enum) return el('code', {}, schema.enum.map((v) => JSON.stringify(v)).join(' | '));
  const type = [].concat(schema.type ?? []).join(' | ');
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    const rows = el('tbody');
    for (const [name, field] of Object.entries(schema.properties)) {
      const label = required.has(name) ? el('strong', {}, name) : el('span', {}, name);
      rows.append(el('tr', {}, el('td', {}, label), el('td', {}, schemaView(field)),
        el('td', {}, field.description ?? '')));
    }
    return el('table', { class: 'apiref-fields' }, rows);
  }
  if (schema.items) return el('span', {}, 'array of ', schemaView(schema.items));
  const bounds = ['minimum', 'maximum', 'pattern', 'format']
    .filter((k) => schema[k] !== undefined)
    .map((k) => `${k} ${schema[k]}`);
  return el('code', {}, [type || 'any', ...bounds].join(', '));
}

function bodyView(content) {
  const out = el('div');
  for (const [media, { schema }] of Object.entries(content ?? {})) {
    out.append(el('div', {}, el('code', {}, media), ' ', schemaView(schema)));
  }
  return out;
}

function operationView(method, path, op) {
  const section = el('section', { class: 'apiref-op', id: anchor(method, path), 'data-testid': 'apiref-op' },
    el('h3', {}, el('span', { class: `apiref-method ${method}` }, method.toUpperCase()), ' ', el('code', {}, path)),
    el('p', {}, op.summary ?? ''));
  if (op.description) section.append(el('p', {}, op.description));
  if (op.security) {
    // Each requirement is one way in: a scheme with the personal token's scopes it needs,
    // or none at all.
    const ways = op.security.map((s) => Object.entries(s)
      .map(([scheme, scopes]) => (scopes.length ? `${scheme} (${scopes.join(', ')})` : scheme))
      .join(' + ') || 'none');
    section.append(el('p', {}, 'Authentication: ', el('code', {}, ways.join(' or '))));
  }
  if (op.parameters?.length) {
    const rows = el('tbody');
    for (const p of op.parameters) {
      rows.append(el('tr', {}, el('td', {}, el('code', {}, p.name)), el('td', {}, p.in),
        el('td', {}, p.required ? 'required' : 'optional'), el('td', {}, schemaView(p.schema)),
        el('td', {}, p.description ?? '')));
    }
    section.append(el('h4', {}, 'Parameters'), el('table', { class: 'apiref-params' }, rows));
  }
  if (op.requestBody) section.append(el('h4', {}, 'Body'), bodyView(op.requestBody.content));
  const rows = el('tbody');
  for (const [status, answer] of Object.entries(op.responses ?? {})) {
    rows.append(el('tr', { 'data-status': status }, el('td', {}, el('strong', {}, status)),
      el('td', {}, answer.description ?? ''), el('td', {}, bodyView(answer.content))));
  }
  section.append(el('h4', {}, 'Responses'), el('table', { class: 'apiref-responses' }, rows));
  return section;
}

async function main() {
  const status = document.getElementById('apiref-status');
  let doc;
  try {
    const response = await fetch('/api/openapi.json');
    doc = await response.json();
  } catch (e) {
    status.textContent = `The document could not be loaded: ${e}`;
    return;
  }
  status.textContent = `${doc.info.title}, version ${doc.info.version}. ${doc.info.description ?? ''}`;
  const index = el('ul');
  const routes = document.getElementById('apiref-routes');
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      index.append(el('li', {}, el('a', { href: `#${anchor(method, path)}` }, `${method.toUpperCase()} ${path}`)));
      routes.append(operationView(method, path, item[method]));
    }
  }
  document.getElementById('apiref-index').append(index);
  const schemas = document.getElementById('apiref-schemas');
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    schemas.append(el('section', { id: `schema-${name}`, class: 'apiref-schema' },
      el('h3', {}, name), el('p', {}, schema.description ?? ''), schemaView({ ...schema, $ref: undefined })));
  }
  status.dataset.loaded = 'true';
}

main();
