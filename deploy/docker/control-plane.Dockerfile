# Control plane image. Build from the repository root:
#   docker build -f deploy/docker/control-plane.Dockerfile -t kube-verdict/control-plane .
FROM eclipse-temurin:17-jdk AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      gcc libc6-dev libnetfilter-queue-dev libnftables-dev libmnl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests -pl control-plane -am package

FROM eclipse-temurin:17-jre
COPY --from=build /src/control-plane/target/kube-verdict-control-plane.jar /opt/kube-verdict/control-plane.jar
USER 65532:65532
ENTRYPOINT ["java", "-jar", "/opt/kube-verdict/control-plane.jar"]
CMD ["control-plane", "--help"]
