// For suites that run routers without a history service: answers the router's question "which
// token generation does this edge hold?" with 0 for every edge, as history would for edges that
// were enrolled and never rotated. Suites that rotate or delete connectors run real history.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { EdgeCredentialReply, Subjects } from '#contracts';
import { encodeJson } from '#messaging';

export function answerEdgeCredentials(nc: NatsConnection, subjects: Subjects): Subscription {
  const reply: EdgeCredentialReply = { generation: 0 };
  return nc.subscribe(subjects.requests.historyEdgeCredential, {
    callback: (_error, msg) => {
      msg.respond(encodeJson(reply));
    },
  });
}
