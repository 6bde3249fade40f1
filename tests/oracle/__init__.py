"""Apache Hudi itself as producer and oracle: an environment with Hudi's Spark bundle
(`env`), recipes of evolving tables Hudi writes (`recipes`), the tables built and cached with
Hudi's own reads of them (`generate`), and the comparison of those reads with the shim's
(`compare`)."""
