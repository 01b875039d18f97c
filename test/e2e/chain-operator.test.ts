// The whole chain suite (chain.test.ts) again, against a nats-server in operator mode started
// from the shipped configuration: every service on its own credentials, the demo edge on the
// NATS user its enrollment minted (issue 11).
import { useOperatorNats } from '../support/e2e-stack.js';
import './chain.test.js';

useOperatorNats(14210);
