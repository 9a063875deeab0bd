package icefloe.fixture;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;

/**
 * {@code POST /v1/transactions/commit}: every table's requirements are checked and its new
 * metadata built before any table is committed, so a 409 or 400 changes nothing. (JdbcCatalog
 * commits tables one by one afterwards: a storage failure between two commits is not covered; the
 * fixture judges clients, not atomicity.)
 */
final class Transactions {
  private Transactions() {}

  static void commit(JdbcCatalog catalog, CommitTransactionRequest request) {
    List<Object[]> prepared = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (UpdateTableRequest change : request.tableChanges()) {
      if (change.identifier() == null || !seen.add(change.identifier().toString())) {
        throw new BadRequestException("Invalid transaction: a change without identifier, or two for one table");
      }
      prepared.add(prepare(catalog, change));
    }
    for (Object[] p : prepared) {
      TableOperations ops = (TableOperations) p[0];
      TableMetadata base = (TableMetadata) p[1];
      TableMetadata updated = (TableMetadata) p[2];
      if (base == null || !updated.changes().isEmpty()) {
        ops.commit(base, updated);
      }
    }
  }

  private static Object[] prepare(JdbcCatalog catalog, UpdateTableRequest change) {
    boolean creates = change.requirements().stream().anyMatch(r -> r instanceof UpdateRequirement.AssertTableDoesNotExist);
    TableOperations ops;
    TableMetadata base;
    try {
      ops = ((BaseTable) catalog.loadTable(change.identifier())).operations();
      base = ops.current();
    } catch (NoSuchTableException missing) {
      if (!creates) {
        throw missing;
      }
      if (!catalog.namespaceExists(change.identifier().namespace())) {
        throw new NoSuchNamespaceException("Namespace does not exist: %s", change.identifier().namespace());
      }
      ops = ((BaseTransaction) catalog.buildTable(change.identifier(), new Schema()).createTransaction()).underlyingOps();
      base = null;
    }
    for (UpdateRequirement requirement : change.requirements()) {
      requirement.validate(base);
    }
    TableMetadata.Builder builder = base == null ? TableMetadata.buildFromEmpty() : TableMetadata.buildFrom(base);
    for (MetadataUpdate update : change.updates()) {
      update.applyTo(builder);
    }
    return new Object[] {ops, base, builder.build()};
  }
}
