// Conversation shapes (files, messages, activities) shared by result decoders and resume seeds.
import { z } from 'zod';
import { type AgentFile, type FileChange, type Message, type Activity } from '../edge-agent.js';

// Shapes shared by results and resume seeds. Results are decoded tolerantly (unknown fields are
// dropped, so a newer edge does not break an older router); what Tether sends to an edge is
// decoded strictly. Strings a proto3 writer omits when empty default to ''.

type ObjectFactory = typeof z.object;
const strictFactory: ObjectFactory = z.strictObject as ObjectFactory;

function shapes(object: ObjectFactory) {
  const agentFile: z.ZodType<AgentFile> = object({
    name: z.string().optional(),
    path: z.string().optional(),
    size: z.number().optional(),
    directory: z.boolean().optional(),
    media_type: z.string().optional(),
  });
  const message: z.ZodType<Message> = object({
    role: z.string().default(''),
    text: z.string().optional(),
    attachments: z.array(agentFile).optional(),
  });
  const fileChange: z.ZodType<FileChange> = object({
    path: z.string().optional(),
    kind: z.string().optional(),
    diff: z.string().optional(),
    move_path: z.string().optional(),
  });
  const activity: z.ZodType<Activity> = object({
    id: z.string().default(''),
    kind: z.string().default(''),
    status: z.string().optional(),
    message_index: z.number().optional(),
    duration_ms: z.number().optional(),
    command: z.string().optional(),
    directory: z.string().optional(),
    output: z.string().optional(),
    exit_code: z.number().nullable().optional(),
    changes: z.array(fileChange).optional(),
    truncated: z.boolean().optional(),
  });
  return { agentFile, message, fileChange, activity };
}

export const loose = shapes(z.object);
export const strict = shapes(strictFactory);
