package icefloe.fixture;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.RESTMessage;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.JsonAutoDetect;
import org.apache.iceberg.shaded.com.fasterxml.jackson.annotation.PropertyAccessor;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.PropertyNamingStrategies;

/**
 * icefloe's judge of REST clients: Apache Iceberg's own {@link CatalogHandlers} over its {@link
 * JdbcCatalog} (SQLite, schema V1, views on), served with the JDK's HTTP server on 127.0.0.1.
 *
 * <p>Arguments: {@code WAREHOUSE [--port P] [--prefix P] [--require-auth] [--token-ttl SECONDS]
 * [--no-views] [--concurrent]}. Prints {@code listening http://127.0.0.1:PORT} when ready.
 * Requests are served one at a time unless {@code --concurrent} (the benchmark: JdbcCatalog is
 * thread-safe through its connection pool).
 */
public final class JavaRestServer {
  private final JdbcCatalog catalog;
  private final String prefix;
  private final boolean requireAuth;
  private final long tokenTtlSeconds;
  private final ReentrantLock serial;
  private final ObjectMapper json = new ObjectMapper();
  private final Map<String, Long> tokens = new ConcurrentHashMap<>();
  private final List<Route> routes = new ArrayList<>();

  interface Action {
    Object run(Call call) throws Exception;
  }

  static final class Route {
    final Endpoint endpoint;
    final String[] template;
    final Action action;

    Route(Endpoint endpoint, String[] template, Action action) {
      this.endpoint = endpoint;
      this.template = template;
      this.action = action;
    }
  }

  /** A problem answered with a status of its own. */
  static final class Problem extends RuntimeException {
    final int status;
    final String type;

    Problem(int status, String type, String message) {
      super(message);
      this.status = status;
      this.type = type;
    }
  }

  final class Call {
    final Map<String, String> vars;
    final Map<String, String> query;
    final byte[] body;

    Call(Map<String, String> vars, Map<String, String> query, byte[] body) {
      this.vars = vars;
      this.query = query;
      this.body = body;
    }

    Namespace namespace() {
      return Namespace.of(decode(vars.get("namespace")).split("\u001f", -1));
    }

    TableIdentifier ident(String key) {
      return TableIdentifier.of(namespace(), decode(vars.get(key)));
    }

    <T extends RESTMessage> T read(Class<T> type) {
      try {
        T message = json.readValue(body, type);
        if (message == null) {
          throw new BadRequestException("Malformed request: empty body");
        }
        message.validate();
        return message;
      } catch (IOException e) {
        throw new BadRequestException("Malformed request: %s", e.getMessage());
      }
    }

    boolean paged() {
      return query.containsKey("pageSize");
    }

    String pageToken() {
      return query.getOrDefault("pageToken", "");
    }
  }

  JavaRestServer(JdbcCatalog catalog, String prefix, boolean requireAuth, long tokenTtlSeconds,
      boolean views, boolean concurrent) {
    this.catalog = catalog;
    this.prefix = prefix;
    this.requireAuth = requireAuth;
    this.tokenTtlSeconds = tokenTtlSeconds;
    this.serial = concurrent ? null : new ReentrantLock();
    json.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    json.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    json.setPropertyNamingStrategy(new PropertyNamingStrategies.KebabCaseStrategy());
    RESTSerializers.registerAll(json);
    routes(views);
  }

  private static final Object NO_CONTENT = new Object();

  private void routes(boolean views) {
    route(Endpoint.V1_LIST_NAMESPACES, c -> {
      String parent = c.query.get("parent");
      Namespace ns = parent == null || parent.isEmpty() ? Namespace.empty() : Namespace.of(parent.split("\u001f", -1));
      return c.paged()
          ? CatalogHandlers.listNamespaces(catalog, ns, c.pageToken(), c.query.get("pageSize"))
          : CatalogHandlers.listNamespaces(catalog, ns);
    });
    route(Endpoint.V1_CREATE_NAMESPACE, c -> CatalogHandlers.createNamespace(catalog, c.read(CreateNamespaceRequest.class)));
    route(Endpoint.V1_LOAD_NAMESPACE, c -> CatalogHandlers.loadNamespace(catalog, c.namespace()));
    route(Endpoint.V1_NAMESPACE_EXISTS, c -> {
      CatalogHandlers.namespaceExists(catalog, c.namespace());
      return NO_CONTENT;
    });
    route(Endpoint.V1_UPDATE_NAMESPACE, c -> CatalogHandlers.updateNamespaceProperties(
        catalog, c.namespace(), c.read(UpdateNamespacePropertiesRequest.class)));
    route(Endpoint.V1_DELETE_NAMESPACE, c -> {
      CatalogHandlers.dropNamespace(catalog, c.namespace());
      return NO_CONTENT;
    });
    route(Endpoint.V1_LIST_TABLES, c -> c.paged()
        ? CatalogHandlers.listTables(catalog, c.namespace(), c.pageToken(), c.query.get("pageSize"))
        : CatalogHandlers.listTables(catalog, c.namespace()));
    route(Endpoint.V1_CREATE_TABLE, c -> {
      CreateTableRequest request = c.read(CreateTableRequest.class);
      return request.stageCreate()
          ? CatalogHandlers.stageTableCreate(catalog, c.namespace(), request)
          : CatalogHandlers.createTable(catalog, c.namespace(), request);
    });
    route(Endpoint.V1_REGISTER_TABLE, c -> CatalogHandlers.registerTable(catalog, c.namespace(), c.read(RegisterTableRequest.class)));
    route(Endpoint.V1_LOAD_TABLE, c -> CatalogHandlers.loadTable(catalog, c.ident("table")));
    route(Endpoint.V1_TABLE_EXISTS, c -> {
      CatalogHandlers.tableExists(catalog, c.ident("table"));
      return NO_CONTENT;
    });
    route(Endpoint.V1_UPDATE_TABLE, c -> CatalogHandlers.updateTable(catalog, c.ident("table"), c.read(UpdateTableRequest.class)));
    route(Endpoint.V1_DELETE_TABLE, c -> {
      if ("true".equalsIgnoreCase(c.query.get("purgeRequested"))) {
        CatalogHandlers.purgeTable(catalog, c.ident("table"));
      } else {
        CatalogHandlers.dropTable(catalog, c.ident("table"));
      }
      return NO_CONTENT;
    });
    route(Endpoint.V1_RENAME_TABLE, c -> {
      CatalogHandlers.renameTable(catalog, c.read(RenameTableRequest.class));
      return NO_CONTENT;
    });
    route(Endpoint.V1_REPORT_METRICS, c -> {
      c.read(ReportMetricsRequest.class);
      return NO_CONTENT;
    });
    route(Endpoint.V1_COMMIT_TRANSACTION, c -> {
      Transactions.commit(catalog, c.read(CommitTransactionRequest.class));
      return NO_CONTENT;
    });
    if (!views) {
      return;
    }
    route(Endpoint.V1_LIST_VIEWS, c -> c.paged()
        ? CatalogHandlers.listViews(catalog, c.namespace(), c.pageToken(), c.query.get("pageSize"))
        : CatalogHandlers.listViews(catalog, c.namespace()));
    route(Endpoint.V1_CREATE_VIEW, c -> CatalogHandlers.createView(catalog, c.namespace(), c.read(CreateViewRequest.class)));
    route(Endpoint.V1_LOAD_VIEW, c -> CatalogHandlers.loadView(catalog, c.ident("view")));
    route(Endpoint.V1_VIEW_EXISTS, c -> {
      CatalogHandlers.viewExists(catalog, c.ident("view"));
      return NO_CONTENT;
    });
    route(Endpoint.V1_UPDATE_VIEW, c -> CatalogHandlers.updateView(catalog, c.ident("view"), c.read(UpdateTableRequest.class)));
    route(Endpoint.V1_DELETE_VIEW, c -> {
      CatalogHandlers.dropView(catalog, c.ident("view"));
      return NO_CONTENT;
    });
    route(Endpoint.V1_RENAME_VIEW, c -> {
      CatalogHandlers.renameView(catalog, c.read(RenameTableRequest.class));
      return NO_CONTENT;
    });
  }

  private void route(Endpoint endpoint, Action action) {
    List<String> parts = new ArrayList<>();
    for (String part : endpoint.path().substring(1).split("/")) {
      if (!part.equals("{prefix}")) {
        parts.add(part);
      } else if (prefix != null) {
        parts.add(prefix);
      }
    }
    routes.add(new Route(endpoint, parts.toArray(new String[0]), action));
  }

  static String decode(String raw) {
    return URLDecoder.decode(raw, UTF_8);
  }

  static Map<String, String> form(String text) {
    Map<String, String> values = new HashMap<>();
    if (text == null || text.isEmpty()) {
      return values;
    }
    for (String pair : text.split("&")) {
      int eq = pair.indexOf('=');
      values.put(decode(eq < 0 ? pair : pair.substring(0, eq)), eq < 0 ? "" : decode(pair.substring(eq + 1)));
    }
    return values;
  }

  /** One HTTP exchange: route, run, answer; never throws. */
  void handle(HttpExchange exchange) throws IOException {
    int status;
    byte[] body;
    try {
      byte[] request = exchange.getRequestBody().readAllBytes();
      Object result = dispatch(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
          form(exchange.getRequestURI().getRawQuery()), exchange.getRequestHeaders().getFirst("Authorization"), request);
      if (result == NO_CONTENT) {
        status = 204;
        body = null;
      } else {
        status = 200;
        body = json.writeValueAsBytes(result);
      }
    } catch (Exception e) {
      Object[] failure = failure(e);
      status = (Integer) failure[0];
      body = (byte[]) failure[1];
    }
    if (body == null || "HEAD".equals(exchange.getRequestMethod())) {
      exchange.sendResponseHeaders(status, -1);
    } else {
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
    exchange.close();
  }

  private Object dispatch(String method, String path, Map<String, String> query, String authorization, byte[] body)
      throws Exception {
    if (path.equals("/v1/oauth/tokens") && method.equals("POST")) {
      return token(form(new String(body, UTF_8)));
    }
    if (requireAuth) {
      String token = authorization != null && authorization.startsWith("Bearer ") ? authorization.substring(7) : null;
      Long expires = token == null ? null : tokens.get(token);
      if (expires == null || expires < System.currentTimeMillis()) {
        throw new NotAuthorizedException("Not authorized: missing, unknown or expired token");
      }
    }
    if (path.equals("/v1/config") && method.equals("GET")) {
      List<Endpoint> endpoints = new ArrayList<>();
      routes.forEach(r -> endpoints.add(r.endpoint));
      ConfigResponse.Builder config = ConfigResponse.builder().withEndpoints(endpoints);
      if (prefix != null) {
        config.withOverride("prefix", prefix);
      }
      return config.build();
    }
    String[] segments = path.substring(1).split("/", -1);
    boolean known = false;
    for (Route route : routes) {
      Map<String, String> vars = match(route.template, segments);
      if (vars == null) {
        continue;
      }
      known = true;
      if (!route.endpoint.httpMethod().equals(method)) {
        continue;
      }
      Call call = new Call(vars, query, body);
      if (serial == null) {
        return route.action.run(call);
      }
      serial.lock();
      try {
        return route.action.run(call);
      } finally {
        serial.unlock();
      }
    }
    throw known
        ? new Problem(405, "MethodNotAllowedException", "Method not allowed: " + method + " " + path)
        : new Problem(404, "NotFoundException", "No route for " + method + " " + path);
  }

  private static Map<String, String> match(String[] template, String[] segments) {
    if (template.length != segments.length) {
      return null;
    }
    Map<String, String> vars = new LinkedHashMap<>();
    for (int i = 0; i < template.length; i++) {
      if (template[i].startsWith("{")) {
        if (segments[i].isEmpty()) {
          return null;
        }
        vars.put(template[i].substring(1, template[i].length() - 1), segments[i]);
      } else if (!template[i].equals(segments[i])) {
        return null;
      }
    }
    return vars;
  }

  private Object token(Map<String, String> form) {
    String grant = form.get("grant_type");
    boolean exchange = "urn:ietf:params:oauth:grant-type:token-exchange".equals(grant);
    if (!"client_credentials".equals(grant) && !exchange) {
      throw new Problem(400, "unsupported_grant_type", "unsupported grant_type " + grant);
    }
    if (exchange) {
      Long expires = tokens.get(form.getOrDefault("subject_token", ""));
      if (expires == null || expires < System.currentTimeMillis()) {
        throw new Problem(400, "invalid_grant", "unknown or expired subject_token");
      }
    } else if (form.get("client_id") == null || !"secret".equals(form.get("client_secret"))) {
      throw new Problem(401, "invalid_client", "client_credentials needs client_id and client_secret=secret");
    }
    String token = "java-" + UUID.randomUUID();
    tokens.put(token, System.currentTimeMillis() + tokenTtlSeconds * 1000);
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("access_token", token);
    answer.put("token_type", "bearer");
    answer.put("expires_in", tokenTtlSeconds);
    answer.put("issued_token_type", "urn:ietf:params:oauth:token-type:access_token");
    return answer;
  }

  private Object[] failure(Exception e) throws IOException {
    int status;
    String type = e.getClass().getSimpleName();
    if (e instanceof Problem) {
      Problem p = (Problem) e;
      if (p.type.contains("_")) { // an OAuth error: its own form
        Map<String, String> oauth = new LinkedHashMap<>();
        oauth.put("error", p.type);
        oauth.put("error_description", p.getMessage());
        return new Object[] {p.status, json.writeValueAsBytes(oauth)};
      }
      status = p.status;
      type = p.type;
    } else if (e instanceof NoSuchNamespaceException || e instanceof NoSuchTableException
        || e instanceof NoSuchViewException || e instanceof NotFoundException) {
      status = 404;
    } else if (e instanceof AlreadyExistsException || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      status = 409;
    } else if (e instanceof BadRequestException || e instanceof ValidationException
        || e instanceof IllegalArgumentException) {
      status = 400;
    } else if (e instanceof NotAuthorizedException) {
      status = 401;
    } else if (e instanceof UnsupportedOperationException) {
      status = 406;
    } else {
      status = 500;
      e.printStackTrace();
    }
    ErrorResponse error = ErrorResponse.builder().responseCode(status).withType(type)
        .withMessage(e.getMessage() == null ? type : e.getMessage()).build();
    return new Object[] {status, json.writeValueAsBytes(error)};
  }

  static JdbcCatalog open(Path root) {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"); // no .crc side files
    Map<String, String> props = new HashMap<>();
    props.put("uri", "jdbc:sqlite:" + root.resolve("java-catalog.db"));
    props.put("warehouse", "file://" + root);
    props.put("io-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
    props.put("jdbc.schema-version", "V1");
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(conf);
    catalog.initialize("java", props);
    return catalog;
  }

  public static void main(String[] args) throws Exception {
    Path root = null;
    int port = 0;
    String prefix = null;
    boolean auth = false;
    boolean views = true;
    boolean concurrent = false;
    long ttl = 3600;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port": port = Integer.parseInt(args[++i]); break;
        case "--prefix": prefix = args[++i]; break;
        case "--require-auth": auth = true; break;
        case "--token-ttl": ttl = Long.parseLong(args[++i]); break;
        case "--no-views": views = false; break;
        case "--concurrent": concurrent = true; break;
        default: root = Paths.get(args[i]).toAbsolutePath().normalize();
      }
    }
    if (root == null) {
      System.err.println("usage: JavaRestServer WAREHOUSE [--port P] [--prefix P] [--require-auth] [--token-ttl S] [--no-views] [--concurrent]");
      System.exit(2);
    }
    Files.createDirectories(root);
    JavaRestServer server = new JavaRestServer(open(root), prefix, auth, ttl, views, concurrent);
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
    http.createContext("/", server::handle);
    http.setExecutor(Executors.newFixedThreadPool(concurrent ? 16 : 4));
    http.start();
    System.out.println("listening http://127.0.0.1:" + http.getAddress().getPort());
    System.out.flush();
  }
}
