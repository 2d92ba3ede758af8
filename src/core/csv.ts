/** A column of a CSV export: its header, how to read a row's value, and what kind of value. */
export interface CsvColumn<T> {
  header: string;
  value: (row: T) => string;
  /** Ids, counts and amounts: written as they are, so -4001 stays a number. Default text. */
  numeric?: boolean;
}

const PLAIN_NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
/** What makes a spreadsheet read a cell as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One field, RFC 4180: quoted only when it holds a quote, comma or line break. Text that would
 * start a formula gets a leading '; a number column's value goes out as it is, unless it is not
 * a plain number after all (upstream data is untrusted), and then it is guarded like text.
 */
function csvField(value: string, numeric = false): string {
  const guarded =
    FORMULA_START.test(value) && !(numeric && PLAIN_NUMBER.test(value)) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** A whole export: the header line, one line per row, CRLF line ends. */
export function toCsv<T>(columns: readonly CsvColumn<T>[], rows: readonly T[]): string {
  const lines = [
    columns.map((column) => csvField(column.header)).join(","),
    ...rows.map((row) =>
      columns.map((column) => csvField(column.value(row), column.numeric)).join(","),
    ),
  ];
  return `${lines.join("\r\n")}\r\n`;
}
