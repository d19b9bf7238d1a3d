-- A time column holding text: the importer must stop with exit 2 naming table and rowid.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 167772171, 1, NULL), ('soon', 2, 167772171, 2, NULL);
