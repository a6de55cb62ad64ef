// Which memories this Worker holds. A Worker cannot list its Durable Objects, so one object of
// its own (by idFromName("directory")) keeps their names: a memory's object adds its name when the
// memory is created, or when it first answers a request if it was made before there was a
// directory (memory.ts `list`). GET /memories reads it, and so does a 404 for a name that is not
// a memory, so a misspelt name is answered with the right ones.

import { DurableObject } from "cloudflare:workers";
import { HttpError } from "./http";

export class Directory extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // One table and no version yet: a change to it adds numbered migrations, as schema.ts keeps.
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS memories (name TEXT PRIMARY KEY)");
    });
  }

  /** Lists a memory; true when it was not listed before. */
  add(name: string): boolean {
    return this.ctx.storage.sql.exec("INSERT INTO memories (name) VALUES (?) ON CONFLICT DO NOTHING RETURNING name", name)
      .toArray().length > 0;
  }

  /** Every memory's name, in code point order (Python's sorted(), as `serve --dir` lists its files). */
  names(): string[] {
    return this.ctx.storage.sql.exec<{ name: string }>("SELECT name FROM memories ORDER BY name").toArray().map((r) => r.name);
  }
}

export const directory = (env: Env) => env.DIRECTORY.get(env.DIRECTORY.idFromName("directory"));

/** The 404 for a name that is no memory (yet), worded as memories/serving/service.py `no_memory`. */
export function noMemory(name: string, names: string[]): HttpError {
  const which = names.length ? `the memories here are ${names.join(", ")}` : "there is none here yet";
  return new HttpError(404, "no_memory",
    `no memory named '${name}': ${which}; create one with PUT /memories/${name} (the dashboard's New memory)`,
    { memories: names });
}
