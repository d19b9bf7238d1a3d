-- One correlation (3) on runtime rows of two threads (11, 12) of pid 10: ambiguous
-- correlation_on_two_threads. Correlation 4: a runtime row and its nested driver row on
-- one thread, one call: joined by time.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cuLaunchKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,
  returnValue INTEGER, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 120, 1, 167772171, 3, 1, 0, NULL),
  (101, 121, 1, 167772172, 3, 1, 0, NULL), (130, 150, 1, 167772171, 4, 1, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,
  returnValue INTEGER, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (135, 145, 1, 167772171, 4, 2, 0, NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 200, 59, NULL, NULL, NULL, 'a', 167772171),
  (50, 200, 59, NULL, NULL, NULL, 'b', 167772172);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1010, 0, 1, 7, 3, 167772160, 1),
  (1100, 1110, 0, 1, 7, 4, 167772160, 1);
