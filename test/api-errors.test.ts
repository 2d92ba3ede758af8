import { describe, expect, it } from "vitest";
import { ApiError, type ApiResource } from "../src/api/errors.ts";
import { InvalidInputError } from "../src/api/validate.ts";
import { apiErrorMessage, asUserError } from "../src/core/api-errors.ts";
import { UserError } from "../src/errors.ts";

const contract = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D";
const wallet = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";

const notFound = (resource: ApiResource) =>
  apiErrorMessage(
    new ApiError({
      kind: "not_found",
      status: 404,
      method: "GET",
      path: "/x",
      resource,
      message: "",
    }),
  );

describe("apiErrorMessage: a not-found names the resource the request was about", () => {
  it.each<[ApiResource, string]>([
    [{ kind: "ens", name: "nobody.eth" }, "No ENS name nobody.eth is registered."],
    [{ kind: "ens_address", address: wallet }, "No ENS name points to that address."],
    [
      { kind: "token", contract, tokenId: "42" },
      "No token 42 in collection 0xBC4C…f13D on this chain.",
    ],
    [
      // A long id is cut by the one rule for token ids in sentences (core/format shortTokenId).
      { kind: "token", contract, tokenId: "123456789012345678901234567890" },
      "No token 1234567890…34567890 in collection 0xBC4C…f13D on this chain.",
    ],
    [{ kind: "collection", address: contract }, "No collection 0xBC4C…f13D on this chain."],
    [{ kind: "wallet", wallet }, "No data for wallet 0xd8dA…6045."],
    [{ kind: "wallet", wallet: "vitalik.eth" }, "No data for wallet vitalik.eth."],
    [{ kind: "holdings", owner: wallet }, "The data service has nothing for that."],
    [{ kind: "wallets" }, "The data service has nothing for that."],
    [{ kind: "segment" }, "The data service has nothing for that."],
    [{ kind: "contracts" }, "The data service has nothing for that."],
    [{ kind: "ranking" }, "The data service has nothing for that."],
  ])("%o", (resource, sentence) => {
    expect(notFound(resource)).toBe(sentence);
  });
});

describe("asUserError", () => {
  it("turns the client's refusal of an input into a UserError with the same code and message", () => {
    const translated = asUserError(
      new InvalidInputError("number_out_of_range", "limit must be a whole number."),
    );
    expect(translated).toBeInstanceOf(UserError);
    expect(translated?.code).toBe("number_out_of_range");
    expect(translated?.message).toBe("limit must be a whole number.");
  });

  it("keeps a UserError and leaves any other error alone", () => {
    const own = new UserError("invalid_argument", "no");
    expect(asUserError(own)).toBe(own);
    expect(asUserError(new Error("bug"))).toBeUndefined();
  });
});
