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

  it("serves a prefix route every path under it; exact paths still win, and the longest prefix", async () => {
    const answer = (text: string) => (_req: unknown, res: import("node:http").ServerResponse) =>
      void res.writeHead(200).end(text);
    const base = await listening((host) => {
      host.mount({ path: "/v/", prefix: true, handle: answer("prefix") });
      host.mount({ path: "/v/assets/", prefix: true, handle: answer("assets") });
      host.mount({ path: "/v/exact", handle: answer("exact") });
    });
    const text = async (path: string) => {
      const response = await fetch(`${base}${path}`);
      return response.status === 200 ? response.text() : response.status;
    };
    expect(await text("/v/abc?x=1")).toBe("prefix");
    expect(await text("/v/abc/challenge")).toBe("prefix");
    expect(await text("/v/")).toBe("prefix");
    expect(await text("/v/assets/page.js")).toBe("assets");
    expect(await text("/v/exact")).toBe("exact");
    expect(await text("/v/exact/more")).toBe("prefix");
    // Only under the prefix: not the bare word, nor a longer one.
    expect(await text("/v")).toBe(404);
    expect(await text("/vx/abc")).toBe(404);
  });

  it("refuses a prefix route not ending in / and a prefix mounted twice", () => {
    const host = new HttpHost(silentLogger());
    expect(() => host.mount({ path: "/v", prefix: true, handle: () => {} })).toThrow(/end with/);
    host.mount({ path: "/v/", prefix: true, handle: () => {} });
    expect(() => host.mount({ path: "/v/", prefix: true, handle: () => {} })).toThrow(
      /mounted twice/,
    );
    expect(host.paths).toEqual(["/v/*"]);
  });

  it("refuses a path mounted twice", () => {
    const host = new HttpHost(silentLogger());
    host.mount({ path: "/x", handle: () => {} });
    expect(() => host.mount({ path: "/x", handle: () => {} })).toThrow(/mounted twice: \/x/);
  });
});
