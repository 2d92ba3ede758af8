import type { Feature } from "../kernel/feature.ts";
import { confirmThrough, walletMovedText } from "./notice.ts";
import { verifyBaseUrl, verifyRoutes } from "./routes.ts";
import { createVerifyService } from "./service.ts";
import type { VerifyService } from "./types.ts";

/**
 * Proved wallets (/verify, /wallets): each person's one-time link, the page's challenge and proof
 * on the HTTP host, and the confirmation in the chat. A proof has the person's gates decided
 * (through `kernel.services.gates`, when the gates feature is there).
 */
export const verifyFeature: Feature<VerifyService> = {
  name: "verify",
  setup(kernel) {
    const { config, http } = kernel;
    const gates = kernel.services.gates;
    const insights = kernel.services.insights;
    const confirm = confirmThrough(() => kernel.sending.get(), config.commandDeadlineMs);
    const service = createVerifyService({
      store: kernel.store,
      chains: kernel.chains,
      // Port 0 is the system's choice: the links name the port actually listened on.
      baseUrl: () => verifyBaseUrl(config.http.publicUrl, http.port ?? config.http.port ?? 0),
      limiters: kernel.shared?.limiters,
      proved: (notice) => {
        // The person's gates are decided at once; it never throws.
        void gates?.onProved(notice.origin.platform, notice.origin.userId, {
          chatId: notice.origin.chatId,
          ...(notice.origin.platform === "discord" && notice.origin.place
            ? { guildId: notice.origin.place }
            : {}),
        });
        // The community it was proved from counts them among its members (insights).
        insights?.noteProof(notice.origin).catch((error: unknown) => {
          kernel.logger.warn({ err: error }, "could not count a proof among a community's members");
        });
      },
      notify: confirm,
      // Another account of the platform proved a wallet (issue 34): its former holder is told
      // privately through the gates' bounded calls, then its gates are decided again.
      ...(gates
        ? {
            moved: (notice) =>
              gates.onWalletMoved(notice.platform, notice.userId, walletMovedText(notice)),
          }
        : {}),
      now: kernel.now,
      logger: kernel.logger.child({ part: "verify" }),
    });
    return { services: { verify: service } };
  },
  build(kernel) {
    const service = kernel.services.verify as VerifyService;
    return {
      exposes: service,
      routes: verifyRoutes({
        service,
        logger: kernel.logger.child({ part: "verify-page" }),
        publicUrl: kernel.config.http.publicUrl,
      }),
      prune: [{ what: "verify links", run: () => service.prune() }],
    };
  },
};
