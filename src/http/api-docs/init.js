// Starts Swagger UI (swagger-ui-dist, loaded just before this file) on the three public OpenAPI
// documents this service publishes. A file, not an inline script: the page's CSP allows scripts from 'self' only.
const DOCUMENTS = [
  { url: '/api/v1/openapi.json', name: 'Data API' },
  { url: '/api/client/openapi.json', name: 'Portal API' },
  { url: '/api/public/attribution/openapi.json', name: 'Attribution API' },
];

// /docs/api?doc=portal (or attribution) opens on that document; the top bar switches between them.
const FIRST = new Map([['portal', 'Portal API'], ['attribution', 'Attribution API']]);
const first = FIRST.get(new URLSearchParams(window.location.search).get('doc')) ?? 'Data API';

// The top bar's own logo is an SVG with a <style> element, which the page's CSP (style-src 'self')
// refuses; a text title takes its place.
const TitleInsteadOfLogo = (system) => ({
  components: { Logo: () => system.React.createElement('span', { className: 'api-docs-title' }, 'API reference') },
});

window.ui = window.SwaggerUIBundle({
  urls: DOCUMENTS,
  'urls.primaryName': first,
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIStandalonePreset],
  plugins: [TitleInsteadOfLogo],
  layout: 'StandaloneLayout',
  // No badge from the public validator service: nothing is requested from another origin.
  validatorUrl: null,
  displayRequestDuration: true,
});
