import { afterEach, describe, expect, it } from "vitest";
import { HttpHost } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { freePort } from "./helpers.ts";

const hosts: HttpHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

async function listening(mount: (host: HttpHost) => void): Promise<string> {
  const host = new HttpHost(silentLogger());
  hosts.push(host);
  mount(host);
  const port = await freePort();
  await host.listen(port, "127.0.0.1");
  return `http://127.0.0.1:${port}`;
}

describe("the one HTTP host", () => {
  it("serves each mounted route at its exact path, query string aside; other paths are 404", async () => {
    const base = await listening((host) => {
      host.mount({ path: "/a", handle: (_req, res) => void res.writeHead(200).end("a") });
      host.mount({ path: "/b/c", handle: async (_req, res) => void res.writeHead(201).end("bc") });
    });
    expect(await (await fetch(`${base}/a?x=1`)).text()).toBe("a");
    const bc = await fetch(`${base}/b/c`, { method: "POST", body: "x" });
    expect([bc.status, await bc.text()]).toEqual([201, "bc"]);
    expect((await fetch(`${base}/a/`)).status).toBe(404);
    expect((await fetch(`${base}/`)).status).toBe(404);
  });

  it("answers 500 when a route fails, and keeps serving", async () => {
    let calls = 0;
    const base = await listening((host) =>
      host.mount({
        path: "/flaky",
        handle: (_req, res) => {
          calls++;
          if (calls === 1) throw new Error("broken");
          res.writeHead(200).end();
        },
      }),
    );
    expect((await fetch(`${base}/flaky`)).status).toBe(500);
    expect((await fetch(`${base}/flaky`)).status).toBe(200);
  });

  it("refuses a path mounted twice", () => {
    const host = new HttpHost(silentLogger());
    host.mount({ path: "/x", handle: () => {} });
    expect(() => host.mount({ path: "/x", handle: () => {} })).toThrow(/mounted twice: \/x/);
  });
});
