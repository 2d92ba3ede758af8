import {
  type Call,
  type CallOptions,
  checkTimestamp,
  oneOf,
  type Page,
  pageQuery,
  seg,
} from "./call.ts";
import {
  DURATIONS,
  type Duration,
  GROUP_BY_PERIODS,
  type GroupByPeriod,
  SORT_DIRECTIONS,
  type SortDirection,
  TOP_METRICS,
  type TopMetric,
} from "./schemas.ts";
import { parseAddress } from "./validate.ts";

/** Collections (collections/v1beta2): endpoints 15 to 17 of the spec. */
export class CollectionsApi {
  constructor(private readonly call: Call) {}

  /** 15. Collections ranked by a metric over a duration, descending. */
  async top(metric: TopMetric, duration: Duration, page: Page = {}, options?: CallOptions) {
    const m = oneOf(metric, TOP_METRICS, "metric");
    const d = oneOf(duration, DURATIONS, "duration");
    return this.call(
      "topCollections",
      {
        method: "GET",
        path: `/collections/v1beta2/top/${seg(m)}/${seg(d)}`,
        query: pageQuery(page),
        ttl: "top",
        resource: { kind: "ranking" },
      },
      options,
    );
  }

  /** 16. Owners of a collection with their owned counts. */
  async ownersList(
    contract: string,
    query: Page & { sortDirection?: SortDirection } = {},
    options?: CallOptions,
  ) {
    const address = parseAddress(contract, "collection address");
    return this.call(
      "ownersList",
      {
        method: "GET",
        path: `/collections/v1beta2/${seg(address)}/owners_list`,
        query: {
          ...pageQuery(query),
          sortDirection:
            query.sortDirection !== undefined
              ? oneOf(query.sortDirection, SORT_DIRECTIONS, "sort direction")
              : undefined,
        },
        ttl: "ownership",
        resource: { kind: "collection", address },
      },
      options,
    );
  }

  /** 17. Owner count over time: one point per period of the duration. */
  async ownersCount(
    contract: string,
    duration: Duration,
    groupBy: GroupByPeriod = "GROUP_BY_PERIOD_1_DAY",
    query: { timestampLt?: string } = {},
    options?: CallOptions,
  ) {
    const address = parseAddress(contract, "collection address");
    const d = oneOf(duration, DURATIONS, "duration");
    const g = oneOf(groupBy, GROUP_BY_PERIODS, "grouping period");
    checkTimestamp(query.timestampLt, "timestampLt");
    return this.call(
      "ownersCount",
      {
        method: "GET",
        path: `/collections/v1beta2/${seg(address)}/owners_count/${seg(d)}/${seg(g)}`,
        query: { timestampLt: query.timestampLt },
        ttl: "ownership",
        resource: { kind: "collection", address },
      },
      options,
    );
  }
}
