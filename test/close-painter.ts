// vitest setupFiles: each test file that drew a chart ends its painter's child when it is done,
// rather than leave a process of some 120 MB waiting out its idle minute beside the next files.
import { afterAll } from "vitest";
import { chartPainter } from "../src/render/charts.ts";

afterAll(() => chartPainter.close());
