-- Nsight Systems export, recent column set (nameId + StringIds, textId).
-- pid 10 = globalPid 167772160 (10 << 24), thread 11 = 167772171; pid 20 = 335544320, thread 21.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaGraphLaunch_v10000'),
  (3, 'cuLaunchKernel'), (4, 'step'), (5, 'kern');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,
  returnValue INTEGER, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (100, 120, 1, 167772171, 5, 1, 0, NULL),
  (100, 120, 1, 335544341, 5, 1, 0, NULL),
  (900, 910, 1, 167772171, 6, 1, 0, NULL),
  (130, 140, 1, 167772171, 7, 2, 0, NULL),
  (150, 190, 1, 167772171, 8, 1, 0, NULL),
  (155, 180, 1, 167772171, 8, 3, 0, NULL),
  (200, 210, 1, 167772171, NULL, 1, 0, NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 500, 59, NULL, NULL, NULL, NULL, 167772171, NULL, 4, 0),
  (60, NULL, 59, NULL, NULL, NULL, 'open range', 167772171, NULL, NULL, 0),
  (70, 70, 34, NULL, NULL, NULL, 'mark', 167772171, NULL, NULL, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, greenContextId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
  graphNodeId INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000, 1010, 0, 1, NULL, 7, 5, 167772160, 5, 5, NULL, NULL),
  (1000, 1010, 1, 1, NULL, 7, 5, 335544320, 5, 5, NULL, NULL),
  (1020, 1030, 0, 1, NULL, 7, 6, 167772160, 5, 5, NULL, NULL),
  (1040, 1050, 0, 1, NULL, 7, 7, 167772160, 5, 5, 42, 1),
  (1060, 1070, 0, 1, NULL, 7, 8, 167772160, 5, 5, NULL, NULL),
  (990, 995, 0, 1, NULL, 7, 2, 167772160, 5, 5, NULL, NULL),
  (1080, 1090, 0, 1, NULL, 7, 100, 167772160, 5, 5, NULL, NULL);
-- Names for the Perfetto export: process 10 and its thread 11 (pid 20 has none).
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (167772160, 10, 'python');
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO StringIds VALUES (6, 'pt_main_thread');
INSERT INTO ThreadNames VALUES (6, 0, 167772171);
