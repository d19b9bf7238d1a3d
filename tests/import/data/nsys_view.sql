-- CUPTI_ACTIVITY_KIND_KERNEL is a VIEW over an endless recursive query: refused (exit 2)
-- before any query runs, never followed.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL
  SELECT n + 1 FROM r) SELECT n AS start, n AS "end", 0 AS deviceId, 7 AS streamId,
  n AS correlationId, 167772160 AS globalPid FROM r;
