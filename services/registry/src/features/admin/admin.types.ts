// Namespaces and API tokens, managed with the admin (bootstrap) token. See docs/registry.md.
import { z } from 'zod';

export interface NamespaceRecord {
  name: string;
  owner: string;
  createdAt: Date;
}

export interface TokenRecord {
  id: string;
  description: string;
  namespace: string | null;
  createdAt: Date;
  expiresAt: Date | null;
}

export const createNamespaceBody = {
  name: z.string().describe('namespace name'),
  owner: z.string().max(256).optional(),
};

export const createTokenBody = {
  description: z.string().max(256).optional(),
  namespace: z.string().optional(),
  ttl_seconds: z.number().int().min(60).max(10 * 365 * 24 * 3600).optional(),
};

export interface NamespaceView {
  name: string;
  owner: string;
  created_at: string;
}

export interface TokenView {
  id: string;
  description: string;
  namespace: string | null;
  created_at: string;
  expires_at: string | null;
}
