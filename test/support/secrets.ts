// The secrets every suite signs with. Each suite runs on a database and namespace of its own, so
// one value per purpose serves all of them; they only need the services' minimum lengths.

/** Signs the api's user tokens (HS256) in suites that start an api. */
export const TEST_JWT_SECRET = 'e2e-jwt-secret-0123456789';
/** Signs and checks edge tokens between routers, history and edges. */
export const TEST_EDGE_SECRET = 'e2e-edge-secret-0123456789';

/** The development defaults: what the dev console signs in with, and what production refuses. */
export const DEV_JWT_SECRET = 'tether-dev-secret-change-me';
export const DEV_EDGE_SECRET = 'tether-dev-edge-secret-change-me';
