import type { ApiError, ApiResource } from "../api/errors.ts";
import { InvalidInputError } from "../api/validate.ts";
import { UserError } from "../errors.ts";
import { short, shortTokenId } from "./format.ts";

/** The sentence a person sees for each kind of data-service failure. */
export function apiErrorMessage(error: ApiError): string {
  switch (error.kind) {
    case "not_found":
      return notFoundMessage(error.resource);
    case "bad_request":
      return `The data service refused that request: ${error.message}`;
    case "unauthorized":
      return "The data service refused the bot's key: tell the bot's operator.";
    case "rate_limited":
      return `The data service is busy, try again in ${Math.max(1, Math.ceil(error.retryAfter ?? 30))} s.`;
    case "unavailable":
      return "The data service is unavailable right now. Try again in a minute.";
    case "timeout":
      return "The data service did not answer in time. Try again shortly.";
    case "invalid_response":
      return `The data service sent an answer I could not read${error.field ? ` (at ${error.field})` : ""}.`;
  }
}

/** What was not found, named after the resource the request was about. */
function notFoundMessage(resource: ApiResource | undefined): string {
  switch (resource?.kind) {
    case "ens":
      return `No ENS name ${resource.name} is registered.`;
    case "ens_address":
      return "No ENS name points to that address.";
    case "token": {
      return `No token ${shortTokenId(resource.tokenId, "text")} in collection ${short(resource.contract)} on this chain.`;
    }
    case "collection":
      return `No collection ${short(resource.address)} on this chain.`;
    case "wallet": {
      const { wallet } = resource;
      return `No data for wallet ${wallet.startsWith("0x") ? short(wallet) : wallet}.`;
    }
    default:
      // A list of wallets, a segment, a ranking, a wallet's tokens in a collection: the service
      // does not say which part it found nothing for.
      return "The data service has nothing for that.";
  }
}

/**
 * A failure the person can fix, as a UserError: the client's refusals of an input (its own
 * InvalidInputError, which knows nothing of chat) become one here, at the core's boundary.
 */
export function asUserError(error: unknown): UserError | undefined {
  if (error instanceof UserError) return error;
  if (error instanceof InvalidInputError) return new UserError(error.code, error.message);
  return undefined;
}
