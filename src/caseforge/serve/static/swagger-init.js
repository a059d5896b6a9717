// /api/docs: Swagger UI (vendored in static/swagger/) over the app's own OpenAPI spec. A
// file of its own, not an inline script, so the page keeps the app's content-security policy.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
