-- Nsight Systems 2021-2022 style: runtime rows carry a name column, kernel rows have
-- no greenContextId, no MEMSET or MEMCPY table, NVTX ranges carry text directly.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,
  returnValue INTEGER, callchainId INTEGER, name TEXT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 120, 1, 167772171, 3, 1, 0, NULL, NULL),
  (300, 320, 1, 167772171, 4, NULL, 0, NULL, 'cudaGraphLaunch');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 200, 59, NULL, NULL, NULL, 'step', 167772171);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1010, 0, 1, 7, 3, 167772160, 1),
  (1100, 1110, 0, 1, 7, 4, 167772160, 1);
