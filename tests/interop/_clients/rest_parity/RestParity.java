package icefloe.fixture;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;

/**
 * icefloe's differential check of REST servers: Java's own {@link RESTCatalog} client runs the
 * same scenarios against each server named on the command line and prints, for each server, each
 * scenario's outcome (its result, or the exception's class and message) as one JSON document.
 * The scenarios are those of Iceberg's REST Compatibility Kit where icefloe's server once answered
 * differently from Java's: messages of missing and conflicting objects, rename conflicts, failed
 * requirements (assert-create too), locations outside the warehouse, names with '/' and '.',
 * float defaults, the properties of a new table.
 *
 * <p>Arguments: {@code NAME=URI=OUTSIDE ...}: a server's name, its URI, and a folder outside its
 * warehouse for the location scenarios.
 */
public final class RestParity {
  interface Scenario {
    Object run() throws Exception;
  }

  private static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.IntegerType.get()),
          Types.NestedField.required(2, "data", Types.StringType.get()));

  private final RESTCatalog catalog;
  private final String outside;
  private final Map<String, Object> outcomes = new LinkedHashMap<>();
  private int namespaces = 0;

  private RestParity(String uri, String outside) {
    this.outside = outside;
    this.catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    Map<String, String> props = new LinkedHashMap<>();
    props.put("uri", uri);
    catalog.initialize("parity", props);
  }

  /** A fresh namespace for each scenario, so none sees another's objects. */
  private Namespace fresh() {
    Namespace ns = missing();
    catalog.createNamespace(ns);
    return ns;
  }

  /** A namespace that does not exist (Java's JDBC catalog makes one of a table created in it). */
  private Namespace missing() {
    return Namespace.of("p" + namespaces++);
  }

  private void scenario(String name, Scenario body) {
    Map<String, Object> outcome = new LinkedHashMap<>();
    try {
      outcome.put("result", body.run());
    } catch (Exception e) {
      outcome.put("error", e.getClass().getSimpleName());
      outcome.put("message", e.getMessage());
    }
    outcomes.put(name, outcome);
  }

  private View view(TableIdentifier ident) {
    return catalog
        .buildView(ident)
        .withSchema(SCHEMA)
        .withDefaultNamespace(ident.namespace())
        .withQuery("spark", "select * from t")
        .create();
  }

  private static TableIdentifier id(Namespace ns, String name) {
    return TableIdentifier.of(ns, name);
  }

  private void run() {
    scenario("load a missing table", () -> catalog.loadTable(id(fresh(), "tbl")));
    scenario("load a table of a missing namespace", () -> catalog.loadTable(id(missing(), "tbl")));
    scenario("load a missing namespace", () -> catalog.loadNamespaceMetadata(missing()));
    scenario("drop a missing table", () -> catalog.dropTable(id(fresh(), "tbl")));
    scenario("create an existing namespace", () -> {
      Namespace ns = fresh();
      catalog.createNamespace(ns);
      return null;
    });
    scenario("drop a namespace that is not empty", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      return catalog.dropNamespace(ns);
    });
    scenario("create a table in a missing namespace",
        () -> catalog.createTable(id(missing(), "t"), SCHEMA).location() != null);
    scenario("create an existing table", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      return catalog.createTable(id(ns, "t"), SCHEMA) != null;
    });
    scenario("create a table where a view is", () -> {
      Namespace ns = fresh();
      view(id(ns, "v"));
      return catalog.createTable(id(ns, "v"), SCHEMA) != null;
    });
    scenario("create a view where a table is", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      return view(id(ns, "t")) != null;
    });
    scenario("create an existing view", () -> {
      Namespace ns = fresh();
      view(id(ns, "v"));
      return view(id(ns, "v")) != null;
    });
    scenario("load a missing view", () -> catalog.loadView(id(fresh(), "v")));
    scenario("load a view of a missing namespace", () -> catalog.loadView(id(missing(), "v")));
    scenario("replace a missing view", () -> catalog.buildView(id(fresh(), "v")).withSchema(SCHEMA)
        .withDefaultNamespace(Namespace.of("x")).withQuery("spark", "select 1").replace());
    scenario("a view with two queries of one dialect", () -> catalog.buildView(id(fresh(), "v"))
        .withSchema(SCHEMA).withDefaultNamespace(Namespace.of("x"))
        .withQuery("trino", "select 1").withQuery("trino", "select 1").create());
    renames();
    requirements();
    names();
    scenario("a float write-default", () -> {
      Schema schema = new Schema(Types.NestedField.optional("f").withId(1).ofType(Types.FloatType.get())
          .withInitialDefault(Literal.of(22.27f)).withWriteDefault(Literal.of(22.27f)).build());
      Namespace ns = fresh();
      catalog.buildTable(id(ns, "t"), schema).withProperty("format-version", "3").create();
      Types.NestedField field = catalog.loadTable(id(ns, "t")).schema().findField("f");
      return List.of(String.valueOf(field.writeDefault()), String.valueOf(field.initialDefault()));
    });
    scenario("the properties of a new table", () -> {
      Namespace ns = fresh();
      Map<String, String> props = new TreeMap<>(
          catalog.buildTable(id(ns, "t"), SCHEMA).withProperty("k", "v").create().properties());
      props.remove("created-at");
      return props;
    });
    scenario("the properties of a table from a create transaction", () -> {
      Namespace ns = fresh();
      Transaction create = catalog.buildTable(id(ns, "t"), SCHEMA).createTransaction();
      create.commitTransaction();
      Map<String, String> props = new TreeMap<>(catalog.loadTable(id(ns, "t")).properties());
      props.computeIfPresent("created-at", (key, value) -> value.matches("\\d{4}-.*Z") ? "(a time)" : value);
      return props;
    });
    locations();
  }

  private void renames() {
    scenario("rename a missing table", () -> {
      Namespace ns = fresh();
      catalog.renameTable(id(ns, "t"), id(ns, "u"));
      return null;
    });
    scenario("rename a table into a missing namespace", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      catalog.renameTable(id(ns, "t"), id(missing(), "t"));
      return null;
    });
    scenario("rename a table onto a table", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      catalog.createTable(id(ns, "u"), SCHEMA);
      catalog.renameTable(id(ns, "t"), id(ns, "u"));
      return null;
    });
    scenario("rename a table onto a view", () -> {
      Namespace ns = fresh();
      catalog.createTable(id(ns, "t"), SCHEMA);
      view(id(ns, "v"));
      catalog.renameTable(id(ns, "t"), id(ns, "v"));
      return null;
    });
    scenario("rename a missing view", () -> {
      Namespace ns = fresh();
      catalog.renameView(id(ns, "v"), id(ns, "w"));
      return null;
    });
    scenario("rename a view into a missing namespace", () -> {
      Namespace ns = fresh();
      view(id(ns, "v"));
      catalog.renameView(id(ns, "v"), id(missing(), "v"));
      return null;
    });
    scenario("rename a view onto a table", () -> {
      Namespace ns = fresh();
      view(id(ns, "v"));
      catalog.createTable(id(ns, "t"), SCHEMA);
      catalog.renameView(id(ns, "v"), id(ns, "t"));
      return null;
    });
    scenario("rename a view onto a view", () -> {
      Namespace ns = fresh();
      view(id(ns, "v"));
      view(id(ns, "w"));
      catalog.renameView(id(ns, "v"), id(ns, "w"));
      return null;
    });
  }

  private void requirements() {
    scenario("a schema change on a stale schema", () -> {
      Table table = catalog.createTable(id(fresh(), "t"), SCHEMA);
      UpdateSchema first = table.updateSchema().addColumn("a", Types.IntegerType.get());
      UpdateSchema second = table.updateSchema().addColumn("b", Types.IntegerType.get());
      first.commit();
      second.commit();
      return null;
    });
    scenario("a spec change on a stale spec", () -> {
      Table table = catalog.createTable(id(fresh(), "t"), SCHEMA);
      UpdatePartitionSpec first = table.updateSpec().addField("id");
      UpdatePartitionSpec second = table.updateSpec().addField("data");
      first.commit();
      second.commit();
      return null;
    });
    scenario("a commit to a dropped and re-created table", () -> {
      Namespace ns = fresh();
      Table table = catalog.createTable(id(ns, "t"), SCHEMA);
      catalog.dropTable(id(ns, "t"));
      catalog.createTable(id(ns, "t"), SCHEMA);
      table.updateProperties().set("k", "v").commit();
      return null;
    });
    scenario("a create transaction after a concurrent create", () -> {
      Namespace ns = fresh();
      Transaction create = catalog.buildTable(id(ns, "t"), SCHEMA).createTransaction();
      catalog.createTable(id(ns, "t"), SCHEMA);
      create.commitTransaction();
      return null;
    });
    scenario("a create transaction where a view is", () -> {
      Namespace ns = fresh();
      Transaction create = catalog.buildTable(id(ns, "v"), SCHEMA).createTransaction();
      view(id(ns, "v"));
      create.commitTransaction();
      return null;
    });
    scenario("a replace transaction of a missing table", () -> {
      catalog.buildTable(id(fresh(), "t"), SCHEMA).replaceTransaction();
      return null;
    });
  }

  private void names() {
    scenario("a namespace with '/'", () -> {
      Namespace ns = Namespace.of("new/db");
      List<Object> seen = new ArrayList<>();
      seen.add(catalog.namespaceExists(ns));
      catalog.createNamespace(ns);
      seen.add(catalog.namespaceExists(ns));
      seen.add(catalog.loadNamespaceMetadata(ns).containsKey("nothing"));
      seen.add(catalog.listNamespaces().contains(ns));
      seen.add(catalog.dropNamespace(ns));
      seen.add(catalog.namespaceExists(ns));
      return seen;
    });
    scenario("a table with '/'", () -> {
      TableIdentifier ident = id(fresh(), "tab/le");
      List<Object> seen = new ArrayList<>();
      seen.add(catalog.tableExists(ident));
      catalog.createTable(ident, SCHEMA);
      seen.add(catalog.tableExists(ident));
      seen.add(catalog.loadTable(ident).schema().asStruct().toString());
      seen.add(catalog.listTables(ident.namespace()).contains(ident));
      seen.add(catalog.dropTable(ident));
      seen.add(catalog.tableExists(ident));
      return seen;
    });
    scenario("a view with '/'", () -> {
      TableIdentifier ident = id(fresh(), "vi/ew");
      List<Object> seen = new ArrayList<>();
      seen.add(catalog.viewExists(ident));
      view(ident);
      seen.add(catalog.viewExists(ident));
      seen.add(catalog.dropView(ident));
      return seen;
    });
    scenario("missing names with '.'", () -> {
      Namespace ns = fresh();
      return List.of(
          catalog.namespaceExists(Namespace.of("new.db")),
          catalog.tableExists(id(ns, "ta.ble")),
          catalog.viewExists(id(ns, "vi.ew")),
          catalog.tableExists(TableIdentifier.of(Namespace.of("new.db"), "t")),
          catalog.dropTable(id(ns, "ta.ble")),
          catalog.dropView(id(ns, "vi.ew")));
    });
    scenario("load a missing table with '.'", () -> catalog.loadTable(id(fresh(), "ta.ble")));
    scenario("load a missing namespace with '.'", () -> catalog.loadNamespaceMetadata(Namespace.of("new.db")));
  }

  private void locations() {
    scenario("a table outside the warehouse", () -> {
      Namespace ns = fresh();
      String location = "file:" + outside + "/" + ns + "/t";
      Table table = catalog.buildTable(id(ns, "t"), SCHEMA).withLocation(location).create();
      return table.location().equals(location);
    });
    scenario("a table moved outside the warehouse", () -> {
      Namespace ns = fresh();
      String location = "file:" + outside + "/" + ns + "/moved";
      Table table = catalog.createTable(id(ns, "t"), SCHEMA);
      table.updateLocation().setLocation(location).commit();
      return catalog.loadTable(id(ns, "t")).location().equals(location);
    });
    scenario("a create transaction outside the warehouse", () -> {
      Namespace ns = fresh();
      String location = "file:" + outside + "/" + ns + "/t";
      Transaction create =
          catalog.buildTable(id(ns, "t"), SCHEMA).withLocation(location).createTransaction();
      create.commitTransaction();
      return catalog.loadTable(id(ns, "t")).location().equals(location);
    });
    scenario("a view outside the warehouse", () -> {
      Namespace ns = fresh();
      String location = "file:" + outside + "/" + ns + "/v";
      View created = catalog.buildView(id(ns, "v")).withSchema(SCHEMA).withDefaultNamespace(ns)
          .withQuery("spark", "select 1").withLocation(location).create();
      return created.location().equals(location);
    });
  }

  public static void main(String[] args) throws Exception {
    Map<String, Object> all = new LinkedHashMap<>();
    for (String arg : args) {
      String[] parts = arg.split("=", 3);
      RestParity parity = new RestParity(parts[1], parts[2]);
      parity.run();
      parity.catalog.close();
      all.put(parts[0], parity.outcomes);
    }
    System.out.println(new ObjectMapper().writeValueAsString(all));
  }
}
