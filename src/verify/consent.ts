/**
 * What the managers of a community see of a person who proves a wallet there (issue 36): said on
 * the /verify page before signing, in /verify's answer and in /wallets, in the same words.
 */
export const MANAGERS_SEE =
  "The managers of the server or group you prove a wallet from see your proved wallets, their behavior, spend and holdings in their member list and its export, unless you choose /wallets private; either way you count in their totals, which are never shown for fewer than 5 people.";
