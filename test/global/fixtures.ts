/**
 * vitest's globalSetup (once per run, before any file): what many files would otherwise each build from scratch.
 *
 * - The database, migrated once. On PGlite a data directory image (`dumpDataDir`): a new PGlite cluster runs initdb
 *   in WebAssembly, 5 to 9 s on the 2-core machine, where loading the image takes under one. The image depends only
 *   on the migrations and PGlite's version, so it is kept between runs in `node_modules/.cache/sealpay-tests/`,
 *   named by a hash of both. On PostgreSQL (`DATABASE_URL`) a template database, migrated here; each file's
 *   database is `CREATE DATABASE … TEMPLATE` it (`openTestDatabase` in `test/harness.ts`), and the template is dropped at the end.
 * - The embedded chain, deployed once: the fhEVM host contracts, the mock coprocessor and sealpay's contracts, saved
 *   in the chain's own format (journal, snapshot, state.json, operator key). Each chain file starts from a copy
 *   (`seedChain` in `test/harness.ts`), so no file's writes reach another, whatever the order.
 *
 * - A whole data directory (that chain and a migrated `pgdata/`) for the service started as a child process
 *   (`seededDataDir` in `test/faults/service.ts`), where the file's subject is not the first start.
 *
 * What is made is handed to the files through `provide` (`test/support/provided.ts`).
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createEmbeddedNetwork } from '../../src/adapters/chain/embedded.ts';
import { MIGRATIONS_FOLDER, openDatabase } from '../../src/db/client.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** An uncompressed PGlite data directory, migrated (PGlite runs). */
    databaseImage: string | null;
    /** The name of a migrated template database beside `DATABASE_URL`'s (PostgreSQL runs). */
    databaseTemplate: string | null;
    /** A data directory whose `chain/` holds the deployed embedded chain and `pgdata/` the migrated database. */
    chainTemplate: string | null;
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'sealpay-tests');

/** A hash of what a migrated database is made of: the migrations, and the PGlite that runs them. */
function databaseFingerprint(): string {
  const hash = createHash('sha256');
  const version = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  ) as { version: string };
  hash.update(`pglite ${version.version}\n`);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(`${path.slice(MIGRATIONS_FOLDER.length)}\n`).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_FOLDER);
  return hash.digest('hex').slice(0, 16);
}

/** The migrated PGlite image of this run, from the cache or made now (written aside, then renamed: whole or absent). */
async function pgliteImage(): Promise<string> {
  const file = join(CACHE, `pglite-${databaseFingerprint()}.tar`);
  if (existsSync(file)) return file;
  mkdirSync(CACHE, { recursive: true });
  const database = await PGlite.create();
  try {
    await migrate(drizzle(database), { migrationsFolder: MIGRATIONS_FOLDER });
    const image = await database.dumpDataDir('none');
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await image.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await database.close();
  }
  return file;
}

/** A migrated template database on the server of `adminUrl`; returns its name and how to drop it. */
async function postgresTemplate(adminUrl: string): Promise<{ name: string; drop: () => Promise<void> }> {
  const name = `sealpay_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize: 1 });
  try {
    await database.migrate();
  } finally {
    // A template must have no connection open while databases are made from it.
    await database.close();
  }
  return {
    name,
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

/**
 * A data directory as `sealpay start` leaves it after a first start and a graceful stop: the embedded chain deployed
 * (its final snapshot taken) and the embedded database migrated in `pgdata/` (opened as the service opens it, so
 * its files are as private as the service's).
 */
async function dataDirTemplate(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-data-template-'));
  const network = await createEmbeddedNetwork({ dataDir });
  await network.close();
  const database = await openDatabase({ databaseUrl: null, dataDir });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
  return dataDir;
}

export default async function setup(project: TestProject) {
  const tiers = new Set(project.vitest.projects.map((each) => each.name));
  const cleanups: (() => Promise<void>)[] = [];
  const adminUrl = process.env.DATABASE_URL;
  // The engine tier's PGlite thread tests start from the image too (on PGlite runs; they never run on PostgreSQL).
  const usesDatabase = tiers.has('api') || tiers.has('chain') || tiers.has('engine');
  let databaseImage: string | null = null;
  let databaseTemplate: string | null = null;
  if (usesDatabase && adminUrl) {
    const template = await postgresTemplate(adminUrl);
    databaseTemplate = template.name;
    cleanups.push(template.drop);
  } else if (usesDatabase) {
    databaseImage = await pgliteImage();
  }
  let chain: string | null = null;
  if (tiers.has('chain') || tiers.has('process')) {
    const dir = await dataDirTemplate();
    chain = dir;
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  }
  project.provide('databaseImage', databaseImage);
  project.provide('databaseTemplate', databaseTemplate);
  project.provide('chainTemplate', chain);
  return async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
}
