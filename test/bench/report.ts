export interface BenchRow {
  name: string;
  value: string;
}

export function markdownTable(title: string, rows: BenchRow[]): string {
  return [
    `### ${title}`,
    "",
    "| measure | value |",
    "|---|---|",
    ...rows.map((row) => `| ${row.name} | ${row.value} |`),
    "",
  ].join("\n");
}
