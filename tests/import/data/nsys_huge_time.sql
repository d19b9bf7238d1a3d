-- A 1 MiB text where a time belongs: exit 2 naming table and rowid.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (replace(hex(zeroblob(524288)), '00', 'kk'), 2,
  167772171, 1, NULL);
