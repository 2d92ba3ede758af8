/** The chat platforms the bot serves (the console is the local one). */
export type Platform = "discord" | "telegram" | "console";
