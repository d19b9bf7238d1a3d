-- NULL globalPid / globalTid: the kernel of correlation 3 (globalPid NULL) and the runtime
-- row of correlation 3 with globalTid NULL join nothing (lost no_pid), even though both
-- would read as pid 0; correlation 4 (pid 10) joins its NVTX range.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 120, 1, NULL, 3, NULL),
  (130, 150, 1, 167772171, 4, NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 200, 59, 'nullrange', NULL), (50, 200, 59, 'a', 167772171);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1010, 0, 7, 3, NULL),
  (1100, 1110, 0, 7, 4, 167772160);
